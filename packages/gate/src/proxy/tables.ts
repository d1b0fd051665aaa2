/**
 * The gateway's port over its tables (proxy/schema.ts) and its implementation on the store
 * engine: the tool pins a person
 * decided and the denies the proxy returned or — in observe mode — would have returned.
 *
 * Tool pinning defends against tool poisoning and definition changes after review ("rug
 * pulls"): a tool whose definition digest is not the one a person pinned for this server
 * identity is neither listed to the agent nor called.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Db, GateDatabase, StoreEngine } from '../store/engine.js';
import { prepared } from '../store/prepared.js';
import { isMcpToolName } from './pins.js';
import type { ProxyDatabase, ProxyMode, ProxyObservationTable, ToolPinTable } from './schema.js';

/** One tool as a definition was seen: what `recordSeen` writes. */
export interface SeenTool {
  server_id: string;
  tool_name: string;
  digest: string;
  /** The definition as digested (JSON text). */
  definition: string;
  server_info: string | null;
}

/** One line of the pilot metric: denies (or would-be denies) by class, tool and code. */
export interface ObservationCount {
  mode: ProxyMode;
  consequence_class: string;
  tool_name: string;
  code: string;
  count: number;
}

export type PinOutcome =
  | { pinned: true; row: ToolPinTable }
  | { pinned: false; reason: 'unknown_tool' | 'digest_mismatch'; row?: ToolPinTable };

/** What the proxy, the approvals page and the CLI need of the gateway's tables. */
export interface ProxyTables {
  /**
   * The server identity's pin version: it changes with every pin and unpin of its tools (from
   * any process on the store), so pins read at one version are current while it stays the same.
   */
  pinVersion(serverId: string): Promise<number>;
  /** Record the definitions a `tools/list` returned (the pin is untouched: a changed definition stays unpinned). */
  recordSeen(tools: readonly SeenTool[], now: number): Promise<void>;
  getPin(serverId: string, toolName: string): Promise<ToolPinTable | undefined>;
  listPins(serverId?: string): Promise<ToolPinTable[]>;
  /**
   * Pin the definition last seen. With `digest`, only if that is still the definition seen (the
   * person pins what they reviewed, never a definition that changed meanwhile).
   */
  pin(serverId: string, toolName: string, opts: { by: string; now: number; digest?: string }): Promise<PinOutcome>;
  /** Remove a pin: the tool is hidden and refused until pinned again. False when the tool was not pinned. */
  unpin(serverId: string, toolName: string, opts?: { by?: string; now?: number }): Promise<boolean>;
  recordObservation(o: Omit<ProxyObservationTable, 'observation_id'>): Promise<void>;
  /** The pilot metric (Tool-Use Binding draft, pilot: "denies that would have been sends"), grouped. */
  countObservations(since: number): Promise<ObservationCount[]>;
}

/** The gateway's queries over the store's own connection (so SQLite keeps one handle per process). */
export class SqlProxyTables implements ProxyTables {
  private readonly db: Kysely<GateDatabase & ProxyDatabase>;
  /** The pin read, compiled once (store/prepared.ts). */
  private readonly pinQuery;
  /** The pin version read of every `tools/call`, compiled once. */
  private readonly pinVersionQuery;

  constructor(private readonly store: StoreEngine) {
    const db = store.db.withTables<ProxyDatabase>();
    this.db = db;
    this.pinQuery = prepared(['server', 'tool'], (m) =>
      db.selectFrom('gate_tool_pin').selectAll().where('server_id', '=', m.server).where('tool_name', '=', m.tool),
    );
    this.pinVersionQuery = prepared(['server'], (m) =>
      db.selectFrom('gate_tool_pin_version').select('version').where('server_id', '=', m.server),
    );
  }

  async pinVersion(serverId: string): Promise<number> {
    const { rows } = await this.db.executeQuery(this.pinVersionQuery({ server: serverId }).compile());
    return rows[0] === undefined ? 0 : Number(rows[0].version);
  }

  async recordSeen(tools: readonly SeenTool[], now: number): Promise<void> {
    for (const t of tools) {
      await this.db
        .insertInto('gate_tool_pin')
        .values({
          server_id: t.server_id,
          tool_name: t.tool_name,
          pinned_digest: null,
          pinned_at: null,
          pinned_by: null,
          seen_digest: t.digest,
          seen_definition: t.definition,
          server_info: t.server_info,
          first_seen_at: now,
          seen_at: now,
        })
        .onConflict((oc) =>
          oc
            .columns(['server_id', 'tool_name'])
            .doUpdateSet({ seen_digest: t.digest, seen_definition: t.definition, server_info: t.server_info, seen_at: now }),
        )
        .execute();
    }
  }

  async getPin(serverId: string, toolName: string): Promise<ToolPinTable | undefined> {
    const { rows } = await this.db.executeQuery(this.pinQuery({ server: serverId, tool: toolName }).compile());
    return rows[0];
  }

  async listPins(serverId?: string): Promise<ToolPinTable[]> {
    let q = this.db.selectFrom('gate_tool_pin').selectAll();
    if (serverId) q = q.where('server_id', '=', serverId);
    return q.orderBy('server_id').orderBy('tool_name').execute();
  }

  async pin(serverId: string, toolName: string, opts: { by: string; now: number; digest?: string }): Promise<PinOutcome> {
    // A name outside the MCP pattern is never a tool the proxy serves (a row recorded before
    // the proxy refused such names included): nothing to pin.
    if (!isMcpToolName(toolName)) return { pinned: false, reason: 'unknown_tool' };
    // The pin and its audit entry commit together.
    const row = await this.store.write(async (trx) => {
      let q = trx
        .withTables<ProxyDatabase>()
        .updateTable('gate_tool_pin')
        .set((eb) => ({ pinned_digest: eb.ref('seen_digest'), pinned_at: opts.now, pinned_by: opts.by }))
        .where('server_id', '=', serverId)
        .where('tool_name', '=', toolName);
      if (opts.digest !== undefined) q = q.where('seen_digest', '=', opts.digest);
      const r = await q.returningAll().executeTakeFirst();
      if (r) {
        await bumpPinVersion(trx, serverId);
        await this.store.appendAuditIn(
          trx,
          [{ kind: 'pin', tool: toolName, server: serverId, digest: r.seen_digest, actor: opts.by }],
          opts.now,
        );
      }
      return r;
    });
    if (row) return { pinned: true, row };
    const existing = await this.getPin(serverId, toolName);
    return existing ? { pinned: false, reason: 'digest_mismatch', row: existing } : { pinned: false, reason: 'unknown_tool' };
  }

  async unpin(serverId: string, toolName: string, opts: { by?: string; now?: number } = {}): Promise<boolean> {
    const now = opts.now ?? Date.now();
    return this.store.write(async (trx) => {
      const r = await trx
        .withTables<ProxyDatabase>()
        .updateTable('gate_tool_pin')
        .set({ pinned_digest: null, pinned_at: null, pinned_by: null })
        .where('server_id', '=', serverId)
        .where('tool_name', '=', toolName)
        .where('pinned_digest', 'is not', null)
        .returning('seen_digest')
        .executeTakeFirst();
      if (r) {
        await bumpPinVersion(trx, serverId);
        await this.store.appendAuditIn(
          trx,
          [{ kind: 'unpin', tool: toolName, server: serverId, digest: r.seen_digest, actor: opts.by ?? null }],
          now,
        );
      }
      return r !== undefined;
    });
  }

  async recordObservation(o: Omit<ProxyObservationTable, 'observation_id'>): Promise<void> {
    // The denies the proxy decides before the gate sees an act (an unpinned tool, arguments or
    // a context it cannot map) are audit decisions too; the gate records its own.
    const decidedHere = o.mode === 'enforce' && (o.code === 'EF_TOOL_NOT_PINNED' || o.candidate_act_id === null);
    await this.store.write(async (trx) => {
      await trx
        .withTables<ProxyDatabase>()
        .insertInto('gate_proxy_observation')
        .values({ observation_id: randomUUID(), ...o })
        .execute();
      if (decidedHere)
        await this.store.appendAuditIn(
          trx,
          [{ kind: 'deny', act_id: o.candidate_act_id, tool: o.tool_name, server: o.server_id, digest: o.arguments_digest, code: o.code }],
          o.recorded_at,
        );
    });
  }

  async countObservations(since: number): Promise<ObservationCount[]> {
    const rows = await this.db
      .selectFrom('gate_proxy_observation')
      .select(['mode', 'consequence_class', 'tool_name', 'code'])
      .select((eb) => eb.fn.countAll().as('count'))
      .where('recorded_at', '>=', since)
      .groupBy(['mode', 'consequence_class', 'tool_name', 'code'])
      .orderBy('consequence_class')
      .orderBy('tool_name')
      .orderBy('code')
      .orderBy('mode')
      .execute();
    return rows.map((r) => ({ ...r, count: Number(r.count) }));
  }
}

/** A new pin version for the server identity, in the transaction of the pin or unpin that changes its pins. */
async function bumpPinVersion(trx: Db, serverId: string): Promise<void> {
  await trx
    .withTables<ProxyDatabase>()
    .insertInto('gate_tool_pin_version')
    .values({ server_id: serverId, version: 1 })
    .onConflict((oc) => oc.column('server_id').doUpdateSet((eb) => ({ version: eb('gate_tool_pin_version.version', '+', 1) })))
    .execute();
}
