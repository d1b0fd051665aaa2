/**
 * enforce's consume on PostgreSQL in ONE round trip: a plpgsql function (created by migration 0005)
 * that reads the epochs (FOR SHARE), checks the authority, consumes it by the conditional
 * UPDATE, writes the journal row and appends the audit entry, all in the statement's own
 * transaction. The checks are store/ledger.ts `checkAuthority` in the same order
 * (Execution Handle draft, sink verification; Tool-Use Binding draft, enforce() contract
 * MUSTs 3–5); the ledger's contract suite (test/store.test.ts) runs both paths against the same
 * expectations. The audit entry's hash is the chain rule of audit/chain.ts: SHA-256 over the
 * JCS form of the entry (keys sorted, absent members omitted); `to_json(text)` escapes strings
 * exactly as JCS does, and integers print the same.
 */
import { CompiledQuery, type Kysely, sql } from 'kysely';
import type { AuditHead } from '../audit/port.js';
import type { EfCode } from '../errors.js';
import type { Db } from './engine.js';
import type { Settled } from './group-commit.js';
import type { GateMigration } from './migration.js';
import type { ConsumeOutcome, ConsumeRequest, IssueAndConsumeRecord, IssueAndConsumeResult, OutcomeRecord } from './ports.js';

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

/**
 * Append one entry to the audit chain inside the caller's transaction: lock the head, hash the
 * entry by the chain rule (JCS: keys sorted, absent members omitted — `array_to_string` skips
 * the NULL members), insert it, move the head.
 */
const AUDIT_APPEND_FUNCTION = `
create or replace function gate_audit_append(
  p_at bigint, p_kind text, p_act_id text, p_tool text, p_server text, p_digest text, p_code text, p_actor text
) returns gate_audit_head language plpgsql as $fn$
declare
  h gate_audit_head;
  body text;
begin
  select * into h from gate_audit_head where id = 1 for update;
  h.seq := h.seq + 1;
  body := '{' || array_to_string(array['"act_id":' || to_json(p_act_id)::text, '"actor":' || to_json(p_actor)::text,
    '"at":' || p_at::text, '"code":' || to_json(p_code)::text, '"digest":' || to_json(p_digest)::text,
    '"kind":' || to_json(p_kind)::text, '"prev_hash":' || to_json(h.hash)::text, '"seq":' || h.seq::text,
    '"server":' || to_json(p_server)::text, '"tool":' || to_json(p_tool)::text], ',') || '}';
  insert into gate_audit (seq, at, kind, act_id, tool, server, digest, code, actor, prev_hash, hash)
    values (h.seq, p_at, p_kind, p_act_id, p_tool, p_server, p_digest, p_code, p_actor, h.hash,
      translate(rtrim(encode(sha256(convert_to(body, 'UTF8')), 'base64'), '='), '+/', '-_'))
    returning gate_audit.hash into h.hash;
  update gate_audit_head set seq = h.seq, hash = h.hash where id = 1;
  return h;
end
$fn$`;

/** `p_invoke`: journal the act INVOKED with its `invoked` entry (dispatch; store/ports.ts ConsumeRequest.invoke). */
const CONSUME_FUNCTION = `
create or replace function gate_consume(
  p_act_id text, p_args_digest text, p_tool_id text, p_function_id text, p_tool_endpoint text, p_destination_id text,
  p_class text, p_act_pe bigint, p_act_ae bigint, p_act_re bigint, p_sink_id text, p_owner text, p_now bigint,
  p_invalidate boolean, p_invoke boolean, p_lock_timeout text
) returns table (ok boolean, code text, reason text, authority_id text, invalidated text, audit_seq bigint, audit_hash text)
language plpgsql as $fn$
declare
  e gate_policy_state;
  a gate_authority;
  refusal text[];
  won text;
  spent text;
  h gate_audit_head;
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
        insert into gate_journal (candidate_act_id, authority_id, arguments_digest, tool_id, owner, state, consumed_at, invoked_at)
          values (p_act_id, won, p_args_digest, p_tool_id, p_owner, case when p_invoke then 'INVOKED' else 'CONSUMED' end, p_now,
            case when p_invoke then p_now end);
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
  -- The audit entries commit with the decision; the head row lock keeps one chain across writers.
  h := gate_audit_append(p_now, case when won is null then 'deny' else 'consumed' end, p_act_id, p_tool_id, p_tool_endpoint,
    p_args_digest, refusal[1], p_owner);
  if won is not null and p_invoke then
    h := gate_audit_append(p_now, 'invoked', p_act_id, p_tool_id, null, p_args_digest, null, p_owner);
  end if;
  return query select won is not null, refusal[1], refusal[2], won, spent, h.seq, h.hash;
end
$fn$`;

/**
 * dispatch's hot path in one statement (store/ports.ts `Ledger.issueAndConsume`): under the epochs the
 * authority carries (read FOR SHARE; else nothing is written and the current ones are returned),
 * the evidence, then the authority, then the decision's audit entries, then gate_consume.
 */
const ISSUE_CONSUME_FUNCTION = `
create or replace function gate_issue_consume(
  p_evidence json, p_authority json, p_events json,
  p_act_id text, p_args_digest text, p_tool_id text, p_function_id text, p_tool_endpoint text, p_destination_id text,
  p_class text, p_act_pe bigint, p_act_ae bigint, p_act_re bigint, p_sink_id text, p_owner text, p_now bigint,
  p_invalidate boolean, p_invoke boolean, p_lock_timeout text
) returns table (r_recorded boolean, r_pe bigint, r_ae bigint, r_re bigint, r_ok boolean, r_code text, r_reason text,
  r_authority_id text, r_invalidated text, r_audit_seq bigint, r_audit_hash text)
language plpgsql as $fn$
declare
  e gate_policy_state;
  a gate_authority;
  ev record;
begin
  perform set_config('lock_timeout', p_lock_timeout, true);
  a := json_populate_record(null::gate_authority, p_authority);
  select * into e from gate_policy_state where id = 1 for share;
  if not found then raise exception 'gate_policy_state row is missing'; end if;
  if e.policy_epoch <> a.policy_epoch or e.authority_epoch <> a.authority_epoch or e.revocation_epoch <> a.revocation_epoch then
    return query select false, e.policy_epoch, e.authority_epoch, e.revocation_epoch, false, null::text, null::text, null::text,
      null::text, null::bigint, null::text;
    return;
  end if;
  -- Evidence before authority: the authority row references it.
  insert into gate_evidence select * from json_populate_record(null::gate_evidence, p_evidence);
  insert into gate_authority select (a).*;
  for ev in select * from json_to_recordset(p_events) as x(kind text, act_id text, tool text, server text, digest text,
    code text, actor text)
  loop
    perform gate_audit_append(p_now, ev.kind, ev.act_id, ev.tool, ev.server, ev.digest, ev.code, ev.actor);
  end loop;
  return query select true, e.policy_epoch, e.authority_epoch, e.revocation_epoch, c.* from gate_consume(p_act_id,
    p_args_digest, p_tool_id, p_function_id, p_tool_endpoint, p_destination_id, p_class, p_act_pe, p_act_ae, p_act_re,
    p_sink_id, p_owner, p_now, p_invalidate, p_invoke, p_lock_timeout) c;
end
$fn$`;

/** Create the functions (PostgreSQL only), their current version. */
async function createConsumeFunctions(db: Kysely<unknown>): Promise<void> {
  await sql.raw(CHECK_FUNCTION).execute(db);
  await sql.raw(AUDIT_APPEND_FUNCTION).execute(db);
  await sql.raw(CONSUME_FUNCTION).execute(db);
  await sql.raw(ISSUE_CONSUME_FUNCTION).execute(db);
}

/**
 * PostgreSQL: dispatch's one-round-trip functions (issue and consume in one statement, consume
 * journaling INVOKED). On a store made before it, it replaces the functions migration 0003 created then.
 */
export const ONE_ROUND_TRIP_DISPATCH_MIGRATION: GateMigration = {
  name: '0005_pg_one_round_trip_dispatch',
  legacyVersion: 5,
  async up(db, { dialect }) {
    if (dialect !== 'postgres') return;
    // gate_consume gained p_invoke: the signature of migration 0003's version is another function.
    await sql`drop function if exists gate_consume(text, text, text, text, text, text, text, bigint, bigint, bigint, text, text, bigint, boolean, text)`.execute(
      db,
    );
    await createConsumeFunctions(db);
  },
};

interface ConsumeRow {
  ok: boolean;
  code: string | null;
  reason: string | null;
  authority_id: string | null;
  invalidated: string | null;
  audit_seq: number;
  audit_hash: string;
}

/**
 * A consume's values named as `gate_consume_group`'s members are, in `gate_consume`'s parameter
 * order (so its positional arguments are these values, in order).
 */
function consumeParams(req: ConsumeRequest) {
  const p = req.act_policy_state;
  return {
    act: req.candidate_act_id,
    digest: req.arguments_digest,
    tool: req.tool_id,
    fn: req.function_id,
    endpoint: req.tool_endpoint,
    destination: req.destination_id,
    class: req.consequence_class,
    pe: p.policy_epoch,
    ae: p.authority_epoch,
    re: p.revocation_epoch,
    sink: req.sink_id,
    owner: req.owner,
    now: req.now,
    invalidate: req.invalidate_on_origin_change === true,
    invoke: req.invoke === true,
  };
}

/** The consume's values as both functions take them, after their own: `consumeParams`, then the lock timeout. */
function consumeValues(req: ConsumeRequest, lockTimeoutMs: number): unknown[] {
  const values: unknown[] = Object.values(consumeParams(req));
  values.push(`${lockTimeoutMs}ms`);
  return values;
}

/** How many values `consumeValues` gives. */
const CONSUME_VALUES = 16;

/**
 * The call of a function with `n` parameters, casts given for the first ones, as SQL text written
 * once: each call only binds its values (no query is built or compiled per call on the hot path).
 */
function callOf(fn: string, n: number, casts: readonly string[] = []): string {
  return `select * from ${fn}(${Array.from({ length: n }, (_, i) => `$${i + 1}${casts[i] ?? ''}`).join(', ')})`;
}

const CONSUME_CALL = callOf('gate_consume', CONSUME_VALUES);
const ISSUE_CONSUME_CALL = callOf('gate_issue_consume', 3 + CONSUME_VALUES, ['::json', '::json', '::json']);
const CONSUME_GROUP_CALL = callOf('gate_consume_group', 2, ['::jsonb']);

function consumeResult(r: ConsumeRow): { outcome: ConsumeOutcome; head: AuditHead } {
  const head = { seq: Number(r.audit_seq), hash: r.audit_hash };
  if (r.ok) return { outcome: { ok: true, authority_id: r.authority_id! }, head };
  const outcome: ConsumeOutcome = { ok: false, code: r.code as EfCode, reason: r.reason ?? '' };
  if (r.invalidated) outcome.invalidated = r.invalidated;
  return { outcome, head };
}

/** One statement, one round trip (autocommit: the statement is its transaction). */
export async function consumeInOneStatement(
  db: Db,
  req: ConsumeRequest,
  lockTimeoutMs: number,
): Promise<{ outcome: ConsumeOutcome; head: AuditHead }> {
  const { rows } = await db.executeQuery<ConsumeRow>(CompiledQuery.raw(CONSUME_CALL, consumeValues(req, lockTimeoutMs)));
  const r = rows[0];
  if (!r) throw new Error('gate_consume returned no row');
  return consumeResult(r);
}

type IssueConsumeRow = { [k in keyof ConsumeRow as `r_${k}`]: ConsumeRow[k] } & {
  r_recorded: boolean;
  r_pe: number;
  r_ae: number;
  r_re: number;
};

/** `issueAndConsume` in one statement, one round trip; `head` is absent when nothing was written. */
export async function issueAndConsumeInOneStatement(
  db: Db,
  record: IssueAndConsumeRecord,
  req: ConsumeRequest,
  lockTimeoutMs: number,
): Promise<{ result: IssueAndConsumeResult; head?: AuditHead }> {
  const values: unknown[] = [JSON.stringify(record.evidence), JSON.stringify(record.authority), JSON.stringify(record.audit ?? [])];
  const { rows } = await db.executeQuery<IssueConsumeRow>(
    CompiledQuery.raw(ISSUE_CONSUME_CALL, values.concat(consumeValues(req, lockTimeoutMs))),
  );
  const r = rows[0];
  if (!r) throw new Error('gate_issue_consume returned no row');
  if (!r.r_recorded)
    return { result: { recorded: false, current: { policy_epoch: r.r_pe, authority_epoch: r.r_ae, revocation_epoch: r.r_re } } };
  const { outcome, head } = consumeResult({
    ok: r.r_ok,
    code: r.r_code,
    reason: r.r_reason,
    authority_id: r.r_authority_id,
    invalidated: r.r_invalidated,
    audit_seq: r.r_audit_seq,
    audit_hash: r.r_audit_hash,
  });
  return { result: { recorded: true, outcome }, head };
}

/**
 * The outcome of an invoked act in one statement (store/journal.ts `recordOutcome`): the
 * journal row INVOKED → EFFECTUATED/FAILED and its `result` audit entry, committed without
 * waiting for the WAL flush (`synchronous_commit = off` for this transaction only: the outcome is
 * the one write that need not wait for the disk).
 */
const RECORD_OUTCOME_FUNCTION = `
create or replace function gate_record_outcome(
  p_act_id text, p_owner text, p_state text, p_result_json text, p_error_code text, p_now bigint, p_lock_timeout text
) returns table (recorded boolean, audit_seq bigint, audit_hash text)
language plpgsql as $fn$
declare
  j gate_journal;
  h gate_audit_head;
begin
  perform set_config('lock_timeout', p_lock_timeout, true);
  perform set_config('synchronous_commit', 'off', true);
  update gate_journal g set state = p_state, result_json = p_result_json, error_code = p_error_code, finished_at = p_now
    where g.candidate_act_id = p_act_id and g.owner = p_owner and g.state = 'INVOKED'
    returning g.* into j;
  if not found then
    return query select false, null::bigint, null::text;
    return;
  end if;
  h := gate_audit_append(p_now, 'result', p_act_id, j.tool_id, null, j.arguments_digest,
    case when p_state = 'FAILED' then p_error_code end, p_owner);
  return query select true, h.seq, h.hash;
end
$fn$`;

const RECORD_OUTCOME_CALL = callOf('gate_record_outcome', 7);

/** `recordOutcome` in one statement, one round trip; `head` is absent when no INVOKED row of `owner` was there. */
export async function recordOutcomeInOneStatement(
  db: Db,
  candidateActId: string,
  owner: string,
  outcome: OutcomeRecord,
  now: number,
  lockTimeoutMs: number,
): Promise<{ recorded: boolean; head?: AuditHead }> {
  const result = outcome.state === 'EFFECTUATED' ? outcome.result_json : null;
  const error = outcome.state === 'FAILED' ? outcome.error_code : null;
  const values = [candidateActId, owner, outcome.state, result, error, now, `${lockTimeoutMs}ms`];
  const { rows } = await db.executeQuery<{ recorded: boolean; audit_seq: number | null; audit_hash: string | null }>(
    CompiledQuery.raw(RECORD_OUTCOME_CALL, values),
  );
  const r = rows[0];
  if (!r) throw new Error('gate_record_outcome returned no row');
  return r.recorded ? { recorded: true, head: { seq: Number(r.audit_seq), hash: r.audit_hash! } } : { recorded: false };
}

/**
 * A group of consumes in one statement, one transaction, one WAL flush (store/group-commit.ts):
 * each member is `gate_consume` as alone, in order, so a later member sees what an earlier one
 * wrote (a duplicate in the group is refused EF_005 like any replay), and each runs in a
 * subtransaction of its own (the `exception` block): a member that raises is rolled back alone
 * and reported as `failure`, the others commit. A lock or statement timeout is not one member's:
 * it ends the whole statement, and nothing of the group is committed.
 */
const CONSUME_GROUP_FUNCTION = `
create or replace function gate_consume_group(p_members jsonb, p_lock_timeout text)
returns table (ok boolean, code text, reason text, authority_id text, invalidated text, audit_seq bigint, audit_hash text,
  failure text)
language plpgsql as $fn$
declare
  m jsonb;
  r record;
  failed text;
begin
  for m in select x.value from jsonb_array_elements(p_members) with ordinality x order by x.ordinality loop
    failed := null;
    begin
      select * into r from gate_consume(m->>'act', m->>'digest', m->>'tool', m->>'fn', m->>'endpoint', m->>'destination',
        m->>'class', (m->>'pe')::bigint, (m->>'ae')::bigint, (m->>'re')::bigint, m->>'sink', m->>'owner', (m->>'now')::bigint,
        (m->>'invalidate')::boolean, (m->>'invoke')::boolean, p_lock_timeout) c;
    exception
      when lock_not_available or query_canceled then raise;
      when others then failed := sqlstate || ' ' || sqlerrm;
    end;
    if failed is null then
      return query select r.ok, r.code, r.reason, r.authority_id, r.invalidated, r.audit_seq, r.audit_hash, null::text;
    else
      return query select null::boolean, null::text, null::text, null::text, null::text, null::bigint, null::text, failed;
    end if;
  end loop;
end
$fn$`;

/** PostgreSQL: a group of concurrent consumes in one statement (group commit, issue 37). */
export const CONSUME_GROUP_MIGRATION: GateMigration = {
  name: '0011_pg_consume_group',
  async up(db, { dialect }) {
    if (dialect !== 'postgres') return;
    await sql.raw(CONSUME_GROUP_FUNCTION).execute(db);
  },
};

type GroupRow = Omit<ConsumeRow, 'ok'> & { ok: boolean | null; failure: string | null };

/**
 * A group of consumes in one statement, one round trip, one commit; one result per member, in
 * order. A member whose values cannot be sent as they are (a time that is not an integer: JSON
 * would turn +∞ into null) fails alone before the statement, as its own statement would have.
 */
export async function consumeGroupInOneStatement(
  db: Db,
  reqs: readonly ConsumeRequest[],
  lockTimeoutMs: number,
): Promise<Settled<{ outcome: ConsumeOutcome; head: AuditHead }>[]> {
  const sent: ConsumeRequest[] = [];
  for (const r of reqs) if (Number.isSafeInteger(r.now)) sent.push(r);
  const { rows } = sent.length
    ? await db.executeQuery<GroupRow>(
        CompiledQuery.raw(CONSUME_GROUP_CALL, [JSON.stringify(sent.map(consumeParams)), `${lockTimeoutMs}ms`]),
      )
    : { rows: [] };
  if (rows.length !== sent.length) throw new Error(`gate_consume_group returned ${rows.length} rows for ${sent.length} members`);
  let next = 0;
  return reqs.map((r) => {
    if (!Number.isSafeInteger(r.now)) return { ok: false, error: new RangeError(`consume: now must be an integer, got ${r.now}`) };
    const row = rows[next++]!;
    if (row.failure !== null || row.ok === null)
      return { ok: false, error: new Error(`gate_consume failed for this member: ${row.failure}`) };
    return { ok: true, value: consumeResult({ ...row, ok: row.ok }) };
  });
}

/** PostgreSQL: the outcome of an invoked act in one statement. */
export const ONE_STATEMENT_OUTCOME_MIGRATION: GateMigration = {
  name: '0007_pg_one_statement_outcome',
  legacyVersion: 7,
  async up(db, { dialect }) {
    if (dialect !== 'postgres') return;
    await sql.raw(RECORD_OUTCOME_FUNCTION).execute(db);
  },
};
