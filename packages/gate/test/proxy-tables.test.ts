/**
 * The proxy tables port's contract suite (tool pins, proxy observations: proxy/tables.ts) on
 * SQLite (a real file) and PostgreSQL (`VRPKIT_TEST_PG_URL`, a fresh schema per test): added by
 * migration 0002 to every store, existing or new, and queried through the store's own connection.
 */
import { join } from 'node:path';
import { type GateStore, openSqliteStore } from '@vrpkit/gate';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { removeTmpDirs, tmpDir } from './procs/common.js';
import { type StoreDatabase, storeBackends } from './store-backends.js';

const dir = tmpDir('proxy-tables');
afterAll(removeTmpDirs);

const T0 = 1_800_000_000_000;
const SERVER = 'stdio:notes#abc';
const seen = (tool_name: string, digest: string) => ({
  server_id: SERVER,
  tool_name,
  digest,
  definition: JSON.stringify({ name: tool_name, description: digest }),
  server_info: JSON.stringify({ name: 'notes', version: '1' }),
});

const backends = storeBackends('the proxy tables port', dir, 'gate_proxy');

for (const backend of backends) {
  describe.skipIf(backend.skip)(`proxy tables on ${backend.name}`, () => {
    let db: StoreDatabase | undefined;
    let store: GateStore | undefined;
    afterEach(async () => {
      await store?.close();
      await db?.drop();
      store = undefined;
      db = undefined;
    });

    it('records definitions as seen without pinning them; a pin binds the reviewed digest; a changed definition is no longer the pinned one', async () => {
      db = await backend.fresh();
      store = await db.open();
      const t = store.proxy;
      await t.recordSeen([seen('note_write', 'd1'), seen('crash', 'c1')], T0);
      expect((await t.listPins(SERVER)).map((p) => [p.tool_name, p.pinned_digest])).toEqual([
        ['crash', null],
        ['note_write', null],
      ]);

      expect(await t.pin(SERVER, 'note_write', { by: 'alice', now: T0 + 1, digest: 'other' })).toMatchObject({
        pinned: false,
        reason: 'digest_mismatch',
      });
      expect(await t.pin(SERVER, 'nope', { by: 'alice', now: T0 + 1 })).toEqual({ pinned: false, reason: 'unknown_tool' });
      // Nothing pinned yet, and refused pins change nothing: the pin version is still the first.
      expect(await t.pinVersion(SERVER)).toBe(0);
      const pinned = await t.pin(SERVER, 'note_write', { by: 'alice', now: T0 + 1, digest: 'd1' });
      expect(pinned).toMatchObject({ pinned: true, row: { pinned_digest: 'd1', pinned_by: 'alice', pinned_at: T0 + 1 } });
      expect(await t.pinVersion(SERVER)).toBe(1);
      expect(await t.pinVersion('another-server')).toBe(0);

      // The server changes the definition: the pin stays on the reviewed digest.
      await t.recordSeen([seen('note_write', 'd2')], T0 + 2);
      expect(await t.getPin(SERVER, 'note_write')).toMatchObject({
        pinned_digest: 'd1',
        seen_digest: 'd2',
        first_seen_at: T0,
        seen_at: T0 + 2,
      });

      // Seeing a new definition does not change the pins, so not their version either.
      expect(await t.pinVersion(SERVER)).toBe(1);
      expect(await t.unpin(SERVER, 'note_write')).toBe(true);
      expect(await t.pinVersion(SERVER)).toBe(2);
      expect(await t.unpin(SERVER, 'note_write')).toBe(false);
      expect(await t.pinVersion(SERVER)).toBe(2);
      expect((await t.getPin(SERVER, 'note_write'))?.pinned_digest).toBeNull();
      expect(await t.listPins('another-server')).toEqual([]);
    });

    it('counts observations by mode, class, tool and code since a time', async () => {
      db = await backend.fresh();
      store = await db.open();
      const t = store.proxy;
      const o = {
        server_id: SERVER,
        tool_name: 'note_write',
        consequence_class: 'PERSISTENT_STATE_CHANGE',
        candidate_act_id: null,
        arguments_digest: null,
      };
      await t.recordObservation({ ...o, recorded_at: T0 - 10, mode: 'observe', code: 'EF_TOOL_NOT_PINNED' });
      await t.recordObservation({ ...o, recorded_at: T0, mode: 'observe', code: 'EF_APPROVAL_REQUIRED' });
      await t.recordObservation({ ...o, recorded_at: T0 + 1, mode: 'observe', code: 'EF_APPROVAL_REQUIRED' });
      await t.recordObservation({ ...o, recorded_at: T0 + 2, mode: 'enforce', code: 'EF_APPROVAL_REQUIRED' });
      expect(await t.countObservations(T0)).toEqual([
        { mode: 'enforce', consequence_class: 'PERSISTENT_STATE_CHANGE', tool_name: 'note_write', code: 'EF_APPROVAL_REQUIRED', count: 1 },
        { mode: 'observe', consequence_class: 'PERSISTENT_STATE_CHANGE', tool_name: 'note_write', code: 'EF_APPROVAL_REQUIRED', count: 2 },
      ]);
    });
  });
}

describe('proxy tables migration', () => {
  it('adds the tables to a store made before them (only the ledger migrated), once', async () => {
    const file = join(dir, 'old.db');
    await (await openSqliteStore(file)).close();
    // Make the file look like one written when the ledger's migration was the only one.
    const raw = new Database(file);
    raw.exec(`DROP TABLE gate_tool_pin; DROP TABLE gate_proxy_observation; DROP TABLE gate_tool_pin_version;
      DROP TABLE gate_audit; DROP TABLE gate_audit_head; DROP TABLE gate_audit_checkpoint; DROP TABLE gate_pending_arguments; DROP TABLE gate_approval_link;
      CREATE INDEX gate_evidence_act ON gate_evidence (candidate_act_id); DELETE FROM gate_migration WHERE name > '0001_ledger'`);
    raw.close();
    const store = await openSqliteStore(file);
    await store.proxy.recordSeen([seen('note_write', 'd1')], T0);
    await store.close();
    const again = await openSqliteStore(file);
    expect((await again.proxy.listPins()).map((p) => p.tool_name)).toEqual(['note_write']);
    await again.close();
    const check = new Database(file, { readonly: true });
    expect(check.prepare('SELECT name FROM gate_migration ORDER BY name').all()).toEqual(
      [
        '0001_ledger',
        '0002_proxy_tables',
        '0003_audit_log',
        '0004_pending_arguments',
        '0005_pg_one_round_trip_dispatch',
        '0006_pin_version',
        '0007_pg_one_statement_outcome',
        '0008_no_evidence_act_index',
        '0009_sqlite_audit_rowid',
        '0010_approval_links',
        '0011_pg_consume_group',
        '0012_pg_authority_fillfactor',
        '0013_downstream_credentials',
        '0014_approver_passkeys',
        '0015_sqlite_no_audit_at_index',
      ].map((name) => ({ name })),
    );
    check.close();
  });
});
