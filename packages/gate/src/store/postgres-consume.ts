/**
 * enforce's consume on PostgreSQL in ONE round trip: a plpgsql function (created by migration 3)
 * that reads the epochs (FOR SHARE), checks the authority, consumes it by the conditional
 * UPDATE, writes the journal row and appends the audit entry, all in the statement's own
 * transaction. The checks are store/kysely-store.ts `checkAuthority` in the same order
 * (Execution Handle draft, sink verification; Tool-Use Binding draft, enforce() contract
 * MUSTs 3–5); the store contract suite (test/store.test.ts) runs both paths against the same
 * expectations. The audit entry's hash is the chain rule of audit/chain.ts: SHA-256 over the
 * JCS form of the entry (keys sorted, absent members omitted); `to_json(text)` escapes strings
 * exactly as JCS does, and integers print the same.
 */
import { sql } from 'kysely';
import type { EfCode } from '../errors.js';
import type { Db } from './kysely-store.js';
import type { AuditHead, ConsumeOutcome, ConsumeRequest } from './types.js';

const CHECK_FUNCTION = `
create or replace function gate_authority_refusal(
  a gate_authority, e gate_policy_state, p_args_digest text, p_tool_id text, p_function_id text, p_tool_endpoint text,
  p_destination_id text, p_class text, p_act_pe bigint, p_act_ae bigint, p_act_re bigint, p_sink_id text, p_now bigint
) returns text[] language plpgsql stable as $fn$
begin
  if a.authority_id is null then return array['EF_002', 'no authority for this act']; end if;
  if a.state = 'CONSUMED' then return array['EF_005', 'authority already consumed']; end if;
  if a.state = 'REVOKED' then return array['EF_REVOKED', 'authority revoked']; end if;
  if a.expires_at <= p_now then return array['EF_002', 'authority expired']; end if;
  if a.sink_id <> p_sink_id then return array['EF_040', 'authority bound to another sink']; end if;
  if a.revocation_epoch <> e.revocation_epoch or p_act_re <> a.revocation_epoch then
    return array['EF_REVOKED', 'revocation epoch advanced'];
  end if;
  if a.policy_epoch <> e.policy_epoch or a.authority_epoch <> e.authority_epoch
     or p_act_pe <> a.policy_epoch or p_act_ae <> a.authority_epoch then
    return array['EF_EPOCH_STALE', 'policy or authority epoch differs'];
  end if;
  if a.destination_id is distinct from p_destination_id or a.tool_endpoint is distinct from p_tool_endpoint then
    return array['EF_DESTINATION_MISMATCH', 'live destination differs'];
  end if;
  if a.arguments_digest <> p_args_digest or a.tool_id <> p_tool_id or a.function_id <> p_function_id
     or a.consequence_class <> p_class then
    return array['EF_SCOPE_MISMATCH', 'live act differs from the authorized scope'];
  end if;
  return null;
end
$fn$`;

const CONSUME_FUNCTION = `
create or replace function gate_consume(
  p_act_id text, p_args_digest text, p_tool_id text, p_function_id text, p_tool_endpoint text, p_destination_id text,
  p_class text, p_act_pe bigint, p_act_ae bigint, p_act_re bigint, p_sink_id text, p_owner text, p_now bigint,
  p_invalidate boolean, p_lock_timeout text
) returns table (ok boolean, code text, reason text, authority_id text, invalidated text, audit_seq bigint, audit_hash text)
language plpgsql as $fn$
declare
  e gate_policy_state;
  a gate_authority;
  refusal text[];
  won text;
  spent text;
  head_seq bigint;
  head_hash text;
  body text;
begin
  perform set_config('lock_timeout', p_lock_timeout, true);
  select * into e from gate_policy_state where id = 1 for share;
  if not found then
    refusal := array['EF_FAIL_CLOSED', 'policy state unavailable'];
  else
    select * into a from gate_authority where candidate_act_id = p_act_id;
    refusal := gate_authority_refusal(a, e, p_args_digest, p_tool_id, p_function_id, p_tool_endpoint, p_destination_id,
      p_class, p_act_pe, p_act_ae, p_act_re, p_sink_id, p_now);
    if refusal is null then
      update gate_authority g set state = 'CONSUMED', consumed_at = p_now, consumed_by = p_owner
        where g.authority_id = a.authority_id and g.state = 'ISSUED' and g.sink_id = p_sink_id
          and g.arguments_digest = p_args_digest and g.expires_at > p_now and g.policy_epoch = e.policy_epoch
          and g.authority_epoch = e.authority_epoch and g.revocation_epoch = e.revocation_epoch
        returning g.authority_id into won;
      if won is null then
        -- A concurrent writer got there first: re-read for the accurate refusal.
        select * into a from gate_authority g where g.authority_id = a.authority_id;
        refusal := coalesce(gate_authority_refusal(a, e, p_args_digest, p_tool_id, p_function_id, p_tool_endpoint,
          p_destination_id, p_class, p_act_pe, p_act_ae, p_act_re, p_sink_id, p_now), array['EF_005', 'authority consumed concurrently']);
      else
        insert into gate_journal (candidate_act_id, authority_id, arguments_digest, tool_id, owner, state, consumed_at)
          values (p_act_id, won, p_args_digest, p_tool_id, p_owner, 'CONSUMED', p_now);
      end if;
    elsif refusal[1] = 'EF_DESTINATION_MISMATCH' and p_invalidate then
      -- Computer use: an origin change spends the authority (Tool-Use Binding draft, computer use).
      update gate_authority g set state = 'CONSUMED', consumed_at = p_now, consumed_by = p_owner
        where g.authority_id = a.authority_id and g.state = 'ISSUED' returning g.authority_id into spent;
      if spent is not null then
        insert into gate_journal (candidate_act_id, authority_id, arguments_digest, tool_id, owner, state, consumed_at,
          finished_at, error_code)
          values (p_act_id, spent, p_args_digest, p_tool_id, p_owner, 'REFUSED', p_now, p_now, refusal[1]);
      end if;
    end if;
  end if;
  -- The audit entry commits with the decision; the head row lock keeps one chain across writers.
  select h.seq, h.hash into head_seq, head_hash from gate_audit_head h where h.id = 1 for update;
  head_seq := head_seq + 1;
  body := '{"act_id":' || to_json(p_act_id)::text || ',"actor":' || to_json(p_owner)::text || ',"at":' || p_now::text
    || coalesce(',"code":' || to_json(refusal[1])::text, '') || ',"digest":' || to_json(p_args_digest)::text
    || ',"kind":' || case when won is null then '"deny"' else '"consumed"' end
    || ',"prev_hash":' || to_json(head_hash)::text || ',"seq":' || head_seq::text
    || coalesce(',"server":' || to_json(p_tool_endpoint)::text, '') || ',"tool":' || to_json(p_tool_id)::text || '}';
  insert into gate_audit (seq, at, kind, act_id, tool, server, digest, code, actor, prev_hash, hash)
    values (head_seq, p_now, case when won is null then 'deny' else 'consumed' end, p_act_id, p_tool_id, p_tool_endpoint,
      p_args_digest, refusal[1], p_owner, head_hash,
      translate(rtrim(encode(sha256(convert_to(body, 'UTF8')), 'base64'), '='), '+/', '-_'))
    returning gate_audit.hash into head_hash;
  update gate_audit_head set seq = head_seq, hash = head_hash where id = 1;
  return query select won is not null, refusal[1], refusal[2], won, spent, head_seq, head_hash;
end
$fn$`;

/** Create the functions (migration 3, PostgreSQL only). */
export async function createConsumeFunction(db: Db): Promise<void> {
  await sql.raw(CHECK_FUNCTION).execute(db);
  await sql.raw(CONSUME_FUNCTION).execute(db);
}

interface ConsumeRow {
  ok: boolean;
  code: string | null;
  reason: string | null;
  authority_id: string | null;
  invalidated: string | null;
  audit_seq: number;
  audit_hash: string;
}

/** One statement, one round trip (autocommit: the statement is its transaction). */
export async function consumeInOneStatement(
  db: Db,
  req: ConsumeRequest,
  lockTimeoutMs: number,
): Promise<{ outcome: ConsumeOutcome; head: AuditHead }> {
  const p = req.act_policy_state;
  const { rows } = await sql<ConsumeRow>`select * from gate_consume(${req.candidate_act_id}, ${req.arguments_digest}, ${req.tool_id},
    ${req.function_id}, ${req.tool_endpoint}, ${req.destination_id}, ${req.consequence_class}, ${p.policy_epoch}, ${p.authority_epoch},
    ${p.revocation_epoch}, ${req.sink_id}, ${req.owner}, ${req.now}, ${req.invalidate_on_origin_change === true}, ${`${lockTimeoutMs}ms`})`.execute(
    db,
  );
  const r = rows[0];
  if (!r) throw new Error('gate_consume returned no row');
  const head = { seq: Number(r.audit_seq), hash: r.audit_hash };
  if (r.ok) return { outcome: { ok: true, authority_id: r.authority_id! }, head };
  const outcome: ConsumeOutcome = { ok: false, code: r.code as EfCode, reason: r.reason ?? '' };
  if (r.invalidated) outcome.invalidated = r.invalidated;
  return { outcome, head };
}
