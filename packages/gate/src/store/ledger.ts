/**
 * The ledger port on the store engine: decisions (evidence, authority, escalation), the single-use
 * consume (Tool-Use Binding draft, enforce() contract MUSTs 3–5; Execution Handle draft, atomic
 * consumption) and revocation. Concurrent consumes are committed in groups, each decided alone
 * (store/group-commit.ts): PostgreSQL runs a group in one statement (store/postgres-consume.ts);
 * SQLite runs the step programs below in one `BEGIN IMMEDIATE`, a savepoint per member.
 */
import type { PolicyState } from '../act.js';
import type { AuditEvent } from '../audit/chain.js';
import type { AuditHead } from '../audit/port.js';
import type { EfCode } from '../errors.js';
import type { StoreCallOptions } from './dialect.js';
import {
  appendEntries,
  CHECKED_COLUMNS,
  type CheckedAuthority,
  type Db,
  first,
  type HotQueries,
  type Program,
  type StoreEngine,
} from './engine.js';
import { sameEpochs } from './epochs.js';
import { ActHasAuthority, EscalationBindingConflict } from './errors.js';
import { GroupCommit, type Settled } from './group-commit.js';
import type {
  AuthorityRow,
  ConsumeOutcome,
  ConsumeRequest,
  DecisionRecord,
  DecisionResult,
  EvidenceRow,
  IssueAndConsumeRecord,
  IssueAndConsumeResult,
  Ledger,
} from './ports.js';

type ConsumeRefusal = Extract<ConsumeOutcome, { ok: false }>;

export class SqlLedger implements Ledger {
  /** PostgreSQL: consumes grouped into one statement (SQLite groups the step programs themselves, `grouped`). */
  private readonly consumes: GroupCommit<ConsumeRequest, ConsumeOutcome> | undefined;

  constructor(private readonly engine: StoreEngine) {
    this.consumes = consumeGroups(engine);
  }

  async recordDecision(record: DecisionRecord, opts?: StoreCallOptions): Promise<DecisionResult> {
    const { ops, q, checkpoints } = this.engine;
    return ops.run(function* (db): Program<DecisionResult> {
      if (record.expectEpochs) {
        const current = yield* currentEpochs(q);
        if (!sameEpochs(current, record.expectEpochs)) return { recorded: false, current };
      }
      const esc = record.escalation;
      // An escalation row is immutable in what it binds: the act a person reviews is the act
      // an approval issues authority for. Re-escalating the act id with another binding is refused.
      if (esc) {
        const prior = yield* first(
          db.selectFrom('gate_escalation').select('binding_digest').where('candidate_act_id', '=', esc.candidate_act_id),
        );
        if (prior && prior.binding_digest !== esc.binding_digest) return { recorded: false, conflict: 'escalation_binding' };
      }
      // Evidence before authority: the authority row references it (foreign key), so it cannot exist without it.
      yield q.evidence(record.evidence);
      if (record.authority) yield q.authority(record.authority);
      if (esc) {
        const written = yield* first(
          db
            .insertInto('gate_escalation')
            .values(esc)
            .onConflict((oc) =>
              oc
                .column('candidate_act_id')
                .doUpdateSet({
                  evidence_id: esc.evidence_id,
                  act_json: esc.act_json,
                  status: 'PENDING',
                  approver: null,
                  requested_at: esc.requested_at,
                  decided_at: null,
                  expires_at: esc.expires_at,
                })
                // Only ever the same binding (a concurrent writer may have inserted another one since the read above).
                .where('gate_escalation.binding_digest', '=', esc.binding_digest),
            )
            .returning('candidate_act_id'),
        );
        // Another binding won the race: throw, so the evidence written above rolls back with it.
        if (!written) throw new EscalationBindingConflict(esc.candidate_act_id);
      }
      if (record.audit) yield* appendEntries(q, record.audit, record.evidence.recorded_at, checkpoints);
      return { recorded: true };
    }, opts?.timeoutMs);
  }

  async issueAndConsume(record: IssueAndConsumeRecord, req: ConsumeRequest, opts?: StoreCallOptions): Promise<IssueAndConsumeResult> {
    const { ops, q, checkpoints } = this.engine;
    if (ops.issueAndConsumeOnce) {
      const { result, head } = await ops.issueAndConsumeOnce(record, req, opts?.timeoutMs);
      // Stale epochs are checked before the insert that would meet an existing authority: tell that case apart (rare, so read after).
      if (!result.recorded && (await this.getAuthority(req.candidate_act_id))) throw new ActHasAuthority(req.candidate_act_id);
      if (head && result.recorded) this.engine.signAfter(head, req.now);
      return result;
    }
    // Grouped with the concurrent consumes and dispatches (store/group-commit.ts); a throw (ActHasAuthority) fails it alone.
    return ops.run(
      function* (db): Program<IssueAndConsumeResult> {
        const current = yield* currentEpochs(q);
        if (!sameEpochs(current, record.expectEpochs)) {
          // An act that has authority already is not stale but taken: its caller reads that authority.
          if (yield* first(q.authorityOfAct({ act: req.candidate_act_id }))) throw new ActHasAuthority(req.candidate_act_id);
          return { recorded: false, current };
        }
        // Evidence before authority (foreign key), then the consume step reads the authority back and checks it like any other.
        yield q.evidence(record.evidence);
        yield q.authority(record.authority);
        // The epochs were just read under the same write lock: the consume checks against them.
        const outcome = yield* consumeSteps(q, db, req, current);
        // One append for the decision's and the consume's entries: one head read, one head move.
        yield* appendEntries(q, [...(record.audit ?? []), ...consumeEvents(req, outcome)], req.now, checkpoints);
        return { recorded: true, outcome };
      },
      opts?.timeoutMs,
      'disk',
      true,
    );
  }

  async getAuthority(candidateActId: string): Promise<AuthorityRow | undefined> {
    return await this.engine.db.executeQuery(this.engine.q.authorityOfAct({ act: candidateActId }).compile()).then((r) => r.rows[0]);
  }

  async getAuthorityById(authorityId: string): Promise<AuthorityRow | undefined> {
    return await this.engine.db.selectFrom('gate_authority').selectAll().where('authority_id', '=', authorityId).executeTakeFirst();
  }

  async getEvidence(evidenceId: string): Promise<EvidenceRow | undefined> {
    return await this.engine.db.selectFrom('gate_evidence').selectAll().where('evidence_id', '=', evidenceId).executeTakeFirst();
  }

  async revoke(authorityId: string, now: number): Promise<boolean> {
    return this.engine.write(async (db) => {
      const r = await db
        .updateTable('gate_authority')
        .set({ state: 'REVOKED', revoked_at: now })
        .where('authority_id', '=', authorityId)
        .where('state', '=', 'ISSUED')
        .returning('authority_id')
        .executeTakeFirst();
      return r !== undefined;
    });
  }

  /** Concurrent consumes are committed in groups (store/group-commit.ts), each decided alone. */
  consume(req: ConsumeRequest, opts?: StoreCallOptions): Promise<ConsumeOutcome> {
    if (this.consumes) return this.consumes.submit(req, opts?.timeoutMs);
    const { ops, q, checkpoints } = this.engine;
    return ops.run(
      function* (db): Program<ConsumeOutcome> {
        const outcome = yield* consumeSteps(q, db, req);
        // The decision and its audit entries commit together: a consume is never without its entry.
        yield* appendEntries(q, consumeEvents(req, outcome), req.now, checkpoints);
        return outcome;
      },
      opts?.timeoutMs,
      'disk',
      true,
    );
  }
}

/** PostgreSQL's consumes as groups of one statement each (`gate_consume_group`); undefined where the dialect has none. */
function consumeGroups(engine: StoreEngine): GroupCommit<ConsumeRequest, ConsumeOutcome> | undefined {
  const { ops } = engine;
  if (!ops.consumeGroupOnce) return undefined;
  const once = ops.consumeGroupOnce.bind(ops);
  return new GroupCommit(async (reqs, timeoutMs) => {
    const results = await once(reqs, timeoutMs);
    // The group's last entry is the head it left: sign it if a checkpoint fell due within the group.
    let last: ConsumeRequest | undefined;
    let head: AuditHead | undefined;
    const outcomes = results.map((r, i): Settled<ConsumeOutcome> => {
      if (!r.ok) return r;
      if (!head || r.value.head.seq > head.seq) [head, last] = [r.value.head, reqs[i]];
      return { ok: true, value: r.value.outcome };
    });
    if (head && last) engine.signAfter(head, last.now);
    return outcomes;
  }, engine.observeGroups);
}

/**
 * Consume an authority as refused, in the consume's transaction (Tool-Use Binding draft,
 * computer use: "Origin change MUST invalidate prior authority"): the authority can never be
 * used again, not even on its original origin, and the journal records why it was spent.
 */
function* invalidate(db: Db, auth: CheckedAuthority, req: ConsumeRequest, refusal: ConsumeRefusal): Program<ConsumeOutcome> {
  const spent = yield* first(
    db
      .updateTable('gate_authority')
      .set({ state: 'CONSUMED', consumed_at: req.now, consumed_by: req.owner })
      .where('authority_id', '=', auth.authority_id)
      .where('state', '=', 'ISSUED')
      .returning('authority_id'),
  );
  if (!spent) return refusal; // a concurrent writer consumed or revoked it first: it is unusable either way
  yield db.insertInto('gate_journal').values({
    candidate_act_id: req.candidate_act_id,
    authority_id: auth.authority_id,
    arguments_digest: req.arguments_digest,
    tool_id: req.tool_id,
    owner: req.owner,
    state: 'REFUSED',
    consumed_at: req.now,
    invoked_at: null,
    finished_at: req.now,
    result_json: null,
    error_code: refusal.code,
  });
  return { ...refusal, invalidated: auth.authority_id };
}

/**
 * The consume's checks and its conditional UPDATE (enforce MUSTs 3–5), inside the caller's
 * transaction; `read`: the epochs that transaction read already.
 */
function* consumeSteps(q: HotQueries, db: Db, req: ConsumeRequest, read?: PolicyState): Program<ConsumeOutcome> {
  const epochs = read ?? (yield* first(q.epochs({})));
  // MUST 5: an epoch we cannot read is uncertain → never allow.
  if (!epochs) return deny('EF_FAIL_CLOSED', 'policy state unavailable');
  const auth = yield* first(q.checkedAuthorityOfAct({ act: req.candidate_act_id }));
  const refusal = checkAuthority(auth, req, epochs);
  if (refusal?.code === 'EF_DESTINATION_MISMATCH' && req.invalidate_on_origin_change) return yield* invalidate(db, auth!, req, refusal);
  if (refusal) return refusal;
  const a = auth!;
  // MUST 4 — the linearization point (hotQueries `consume`).
  const won = yield* first(
    q.consume({
      id: a.authority_id,
      now: req.now,
      owner: req.owner,
      sink: req.sink_id,
      digest: req.arguments_digest,
      pe: epochs.policy_epoch,
      ae: epochs.authority_epoch,
      re: epochs.revocation_epoch,
    }),
  );
  if (!won) {
    // A concurrent writer got there between our read and the UPDATE (PostgreSQL): re-read for the accurate refusal.
    const latest = yield* first(db.selectFrom('gate_authority').select(CHECKED_COLUMNS).where('authority_id', '=', a.authority_id));
    return checkAuthority(latest, req, epochs) ?? deny('EF_005', 'authority consumed concurrently');
  }
  // The journal row commits with the consume, so a crash right after leaves a trace (T-G); for
  // dispatch it is INVOKED already: the invoke follows this commit, and a restart makes it EFFECT_RESULT_UNKNOWN.
  yield q.journalConsumed({
    act: req.candidate_act_id,
    authority: a.authority_id,
    digest: req.arguments_digest,
    tool: req.tool_id,
    owner: req.owner,
    state: req.invoke ? 'INVOKED' : 'CONSUMED',
    now: req.now,
    invoked: req.invoke ? req.now : null,
  });
  return { ok: true, authority_id: a.authority_id };
}

/** The audit entries a consume commits with: its refusal, or `consumed` (and `invoked` when the journal row is INVOKED). */
function consumeEvents(req: ConsumeRequest, outcome: ConsumeOutcome): AuditEvent[] {
  const { candidate_act_id: act_id, tool_id: tool, tool_endpoint: server, arguments_digest: digest, owner: actor } = req;
  if (!outcome.ok) return [{ kind: 'deny', act_id, tool, server, digest, code: outcome.code, actor }];
  const consumed: AuditEvent = { kind: 'consumed', act_id, tool, server, digest, actor };
  return req.invoke ? [consumed, { kind: 'invoked', act_id, tool, digest, actor }] : [consumed];
}

function* currentEpochs(q: HotQueries): Program<PolicyState> {
  const s = yield* first(q.epochs({}));
  if (!s) throw new Error('gate_policy_state row is missing');
  return s;
}

function deny(code: EfCode, reason: string): ConsumeRefusal {
  return { ok: false, code, reason };
}

/**
 * The refusals of enforce MUST 3, in the order of the execution-handle reference's
 * `_verify_inside` (Execution Handle draft, sink verification): existence, single use, revocation, expiry,
 * sink, epochs, destination, then the arguments/tool scope.
 */
function checkAuthority(auth: CheckedAuthority | undefined, req: ConsumeRequest, epochs: PolicyState): ConsumeRefusal | undefined {
  if (!auth) return deny('EF_002', 'no authority for this act');
  if (auth.state === 'CONSUMED') return deny('EF_005', 'authority already consumed');
  if (auth.state === 'REVOKED') return deny('EF_REVOKED', 'authority revoked');
  if (auth.expires_at <= req.now) return deny('EF_002', 'authority expired');
  // The sink compares with its own identity only (Tool-Use Binding draft, enforce() contract MUST 3: "sink-mismatched").
  if (auth.sink_id !== req.sink_id) return deny('EF_040', 'authority bound to another sink');
  // Finality-bound revocation draft: a revocation epoch bump revokes everything issued before it; a policy/authority bump makes it stale.
  if (auth.revocation_epoch !== epochs.revocation_epoch || req.act_policy_state.revocation_epoch !== auth.revocation_epoch)
    return deny('EF_REVOKED', 'revocation epoch advanced');
  if (
    auth.policy_epoch !== epochs.policy_epoch ||
    auth.authority_epoch !== epochs.authority_epoch ||
    req.act_policy_state.policy_epoch !== auth.policy_epoch ||
    req.act_policy_state.authority_epoch !== auth.authority_epoch
  )
    return deny('EF_EPOCH_STALE', 'policy or authority epoch differs');
  // Tool-Use Binding draft, MCP mapping: server identity is in tool_endpoint and destination, so a swapped server fails here.
  if (auth.destination_id !== req.destination_id || auth.tool_endpoint !== req.tool_endpoint)
    return deny('EF_DESTINATION_MISMATCH', 'live destination differs');
  if (
    auth.arguments_digest !== req.arguments_digest ||
    auth.tool_id !== req.tool_id ||
    auth.function_id !== req.function_id ||
    auth.consequence_class !== req.consequence_class
  )
    return deny('EF_SCOPE_MISMATCH', 'live act differs from the authorized scope');
  return undefined;
}
