/**
 * Adoption (issue 31 item 1: migrations through Kysely's `Migrator`): a store the gate's own
 * runner migrated opens under the registry with its data intact, and nothing is migrated twice.
 *
 * The stores are real ones made by that runner: `fixtures/legacy-store.sql` and
 * `fixtures/legacy-store.pg.sql` (a `pg_dump --inserts` of its PostgreSQL schema, the schema name
 * replaced by `__SCHEMA__`) were written by main at 43aece5 (`openSqliteStore`/`openPostgresStore`,
 * migrations 1–9 in `gate_schema_migrations`): one act issued, consumed, invoked and
 * effectuated; one escalation pending with its arguments kept; one tool pinned; a deny appended;
 * checkpoints signed every 3 entries and on close with the test key (procs/common.ts).
 */

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type GateStore, openPostgresStore, openSqliteStore, verifyAuditChain } from '@vrpkit/gate';
import { pgTestSchemas } from '@vrpkit/testkit/pg';
import { sqliteFromDump } from '@vrpkit/testkit/sql';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { PUBLIC_JWK, removeTmpDirs, SINK, tmpDir } from './procs/common.js';

const pgs = pgTestSchemas('gate store adoption', 'adopting a PostgreSQL store made by the gate’s own runner');
const FIXTURES = join(import.meta.dirname, 'fixtures');
const dir = tmpDir('store-adoption');
const E = { policy_epoch: 1, authority_epoch: 1, revocation_epoch: 1 };
const NAMES = [
  '0001_ledger',
  '0002_proxy_tables',
  '0003_audit_log',
  '0004_pending_arguments',
  '0005_pg_one_round_trip_dispatch',
  '0006_pin_version',
  '0007_pg_one_statement_outcome',
  '0008_no_evidence_act_index',
  '0009_sqlite_audit_rowid',
  '0010_pg_consume_group',
  '0011_pg_authority_fillfactor',
];

interface Legacy {
  open(): Promise<GateStore>;
  /** Run SQL on the store's database outside the gate (what the test inspects or prepares). */
  query<T>(text: string): Promise<T[]>;
  drop(): Promise<void>;
}

async function legacySqlite(): Promise<Legacy> {
  const file = join(dir, `${randomBytes(6).toString('hex')}.sqlite`);
  sqliteFromDump(join(FIXTURES, 'legacy-store.sql'), file);
  return {
    open: () => openSqliteStore(file),
    async query<T>(text: string) {
      const db = new Database(file);
      try {
        const stmt = db.prepare(text);
        if (stmt.reader) return stmt.all() as T[];
        stmt.run();
        return [];
      } finally {
        db.close();
      }
    },
    async drop() {},
  };
}

/** The pg_dump restored into a schema testkit named (the dump creates it). */
async function legacyPostgres(): Promise<Legacy> {
  const schema = pgs!.schema('gate_adopt');
  await pgs!.query(readFileSync(join(FIXTURES, 'legacy-store.pg.sql'), 'utf8').replaceAll('__SCHEMA__', schema));
  return {
    open: () => openPostgresStore(pgs!.url, { schema, poolSize: 2 }),
    query: (text) => pgs!.query(text, schema),
    drop: () => pgs!.drop(schema),
  };
}

const backends = [
  { name: 'sqlite', skip: false, make: legacySqlite },
  { name: 'postgres', skip: !pgs, make: legacyPostgres },
];

/** What the runner wrote, read through the ports. */
async function expectLegacyData(store: GateStore): Promise<void> {
  expect(await store.epochs.current()).toEqual(E);
  expect(await store.ledger.getAuthority('legacy-1')).toMatchObject({ authority_id: 'afa-legacy-1', state: 'CONSUMED' });
  expect(await store.journal.get('legacy-1')).toMatchObject({ state: 'EFFECTUATED', result_json: '{"hits":3}' });
  expect(await store.escalations.get('legacy-2')).toMatchObject({ status: 'PENDING', binding_digest: 'binding-legacy-2' });
  expect(await store.pendingArguments.get('legacy-2')).toMatchObject({ arguments_json: '{"to":"a@example.com"}' });
  expect(await store.proxy.getPin('stdio:legacy', 'read_note')).toMatchObject({ pinned_digest: 'def-1', pinned_by: 'alice' });
  expect(await store.proxy.pinVersion('stdio:legacy')).toBe(1);
  expect(await verifyAuditChain(store.audit, { trustedKeys: [PUBLIC_JWK] })).toMatchObject({
    ok: true,
    entries: 8,
    checkpoints: 3,
    last_checkpoint_seq: 8,
  });
}

for (const b of backends) {
  describe.skipIf(b.skip)(`adopting a store the gate's own runner migrated: ${b.name}`, () => {
    it('opens with its data intact, records the runner’s versions under the registry’s names, and runs none of them again', async () => {
      const legacy = await b.make();
      try {
        const store = await legacy.open();
        await expectLegacyData(store);
        await store.close();
        // Adopted, not run, and the runner's table is gone.
        const recorded = await legacy.query<{ name: string; timestamp: string }>(
          'select name, timestamp from gate_migration order by name',
        );
        // One time for every adopted name (the runner's clock was ahead: dated no later than the adoption).
        expect(recorded.map((r) => r.name)).toEqual(NAMES);
        // The runner knew versions 1–9: those are adopted at one time; the registry's later ones run after.
        const adopted = NAMES.indexOf('0009_sqlite_audit_rowid') + 1;
        expect(new Set(recorded.slice(0, adopted).map((r) => r.timestamp)).size).toBe(1);
        expect(recorded.slice(adopted).every((r) => r.timestamp >= recorded[0]!.timestamp)).toBe(true);
        expect(Date.parse(recorded[0]!.timestamp)).toBeLessThanOrEqual(Date.now());
        await expect(legacy.query('select * from gate_schema_migrations')).rejects.toThrow(/gate_schema_migrations/);

        // The adopted store works (PostgreSQL: through the runner's functions), and a reopen changes nothing.
        const again = await legacy.open();
        await expectLegacyData(again);
        const consumed = await again.ledger.issueAndConsume(
          {
            expectEpochs: E,
            evidence: {
              evidence_id: 'ev-after',
              candidate_act_id: 'after',
              act_digest: 'act-digest',
              arguments_digest: 'args-after',
              decision: 'ISSUED',
              code: null,
              reason: 'after adoption',
              policy_id: 'p',
              ...E,
              approver: null,
              recorded_at: 1_800_000_020_000,
            },
            authority: {
              authority_id: 'afa-after',
              candidate_act_id: 'after',
              evidence_id: 'ev-after',
              arguments_digest: 'args-after',
              tool_id: 'search',
              function_id: 'search',
              tool_endpoint: null,
              destination_id: 'maps.example',
              sink_id: SINK,
              consequence_class: 'INFORMATIONAL',
              issued_at: 1_800_000_020_000,
              expires_at: 1_800_000_080_000,
              ...E,
              jws: 'x.y.z',
              state: 'ISSUED',
              consumed_at: null,
              consumed_by: null,
              revoked_at: null,
            },
            audit: [{ kind: 'allow', act_id: 'after', tool: 'search', digest: 'args-after' }],
          },
          {
            candidate_act_id: 'after',
            arguments_digest: 'args-after',
            tool_id: 'search',
            function_id: 'search',
            tool_endpoint: null,
            destination_id: 'maps.example',
            consequence_class: 'INFORMATIONAL',
            act_policy_state: E,
            sink_id: SINK,
            owner: 'owner-b',
            now: 1_800_000_020_001,
            invoke: true,
          },
        );
        expect(consumed).toMatchObject({ recorded: true, outcome: { ok: true } });
        expect(await verifyAuditChain(again.audit)).toMatchObject({ ok: true, entries: 11 });
        await again.close();
        expect(await legacy.query('select name, timestamp from gate_migration order by name')).toEqual(recorded);
      } finally {
        await legacy.drop();
      }
    });

    it('adopts a store the runner left part-way (versions 1–7) and applies the rest once', async () => {
      const legacy = await b.make();
      try {
        // As a gate from before migration 8 left it: the evidence index present, 8 and 9 not recorded.
        await legacy.query('create index gate_evidence_act on gate_evidence (candidate_act_id)');
        await legacy.query('delete from gate_schema_migrations where version >= 8');
        const store = await legacy.open();
        await expectLegacyData(store);
        await store.close();
        const recorded = await legacy.query<{ name: string; timestamp: string }>(
          'select name, timestamp from gate_migration order by name',
        );
        expect(recorded.map((r) => r.name)).toEqual(NAMES);
        // 1–7 adopted at one time, 8 and 9 run afterwards: Migrator's order (time, then name) is the registry's.
        const adopted = recorded[0]!.timestamp;
        expect(recorded.slice(0, 7).every((r) => r.timestamp === adopted)).toBe(true);
        expect(recorded.slice(7).every((r) => r.timestamp >= adopted)).toBe(true);
        // A later open finds nothing to run and the order intact.
        const again = await legacy.open();
        await expectLegacyData(again);
        await again.close();
        expect(await legacy.query('select name, timestamp from gate_migration order by name')).toEqual(recorded);
        const index =
          b.name === 'sqlite'
            ? await legacy.query("select name from sqlite_master where type = 'index' and name = 'gate_evidence_act'")
            : await legacy.query(
                "select indexname from pg_indexes where indexname = 'gate_evidence_act' and schemaname = current_schema()",
              );
        expect(index).toEqual([]);
      } finally {
        await legacy.drop();
      }
    });
  });
}

afterAll(removeTmpDirs);
