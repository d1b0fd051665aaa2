/**
 * The approvers' passkeys port's contract suite (approvers/passkeys.ts) on a real SQLite file and on
 * PostgreSQL (`VRPKIT_TEST_PG_URL`, a fresh schema per test; skipped, saying so, without it): an
 * enrollment link is stored by its token's digest only, enrolls one passkey for its subject once
 * (of two racing enrollments, one), never after it expired; a passkey's signature counter moves
 * only from the value read.
 */
import { sha256Base64url } from '@vrpkit/core';
import { enrollmentUrl, type GateStore, issueApproverEnrollment } from '@vrpkit/gate';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { enrollmentDigest } from '../src/approvers/passkeys.js';
import { removeTmpDirs, tmpDir } from './procs/common.js';
import { type StoreDatabase, storeBackends } from './store-backends.js';

const dir = tmpDir('approver-passkeys');
afterAll(removeTmpDirs);
const backends = storeBackends('the approver passkeys port', dir, 'gate_passkeys');

const T0 = Date.parse('2026-12-05T21:00:00Z');
const MIN = 60_000;

/** A passkey as the registration ceremony yields it (its id and key are opaque to the store). */
const passkey = (id: string, counter = 0) => ({
  credential_id: id,
  public_key: `cose-${id}`,
  counter,
  transports: '["internal"]',
  created_at: T0,
  last_used_at: null,
});

for (const b of backends) {
  describe.skipIf(b.skip)(`approver passkeys on ${b.name}`, () => {
    let db: StoreDatabase;
    let store: GateStore;

    beforeEach(async () => {
      db = await b.fresh();
      store = await db.open({ poolSize: 4 });
    });
    afterEach(async () => {
      await store.close();
      await db.drop();
    });

    it('stores the digest of an enrollment token, never the token; the link is open until it expires', async () => {
      const link = await issueApproverEnrollment(store.approverPasskeys, { subject: 'dave', now: T0 });
      expect(link.expires_at).toBe(T0 + 30 * MIN); // the default: thirty minutes
      const digest = enrollmentDigest(link.token)!;
      expect(digest).toBe(sha256Base64url(link.token));
      const open = await store.approverPasskeys.openEnrollment(digest, T0 + 1);
      expect(open).toEqual({ token_digest: digest, subject: 'dave', issued_at: T0, expires_at: T0 + 30 * MIN, used_at: null });
      expect(Object.values(open!)).not.toContain(link.token);
      expect(await store.approverPasskeys.openEnrollment(link.token, T0 + 1)).toBeUndefined();
      expect(await store.approverPasskeys.openEnrollment(digest, T0 + 30 * MIN)).toBeUndefined();
      expect(enrollmentDigest('not a token')).toBeUndefined();
      expect(enrollmentUrl('http://localhost:8932', link.token)).toBe(`http://localhost:8932/approvers/enroll?token=${link.token}`);
    });

    it("enrolls one passkey for the link's subject, once; an expired link enrolls nothing", async () => {
      const link = await issueApproverEnrollment(store.approverPasskeys, { subject: 'dave', now: T0, ttlMs: 5 * MIN });
      const digest = enrollmentDigest(link.token)!;
      const spent = await store.approverPasskeys.enroll(digest, passkey('cred-1'), T0 + 1);
      expect(spent).toMatchObject({ subject: 'dave', used_at: T0 + 1 });
      expect(await store.approverPasskeys.passkey('cred-1')).toEqual({ ...passkey('cred-1'), subject: 'dave' });
      expect(await store.approverPasskeys.credentialIdsOf('dave')).toEqual(['cred-1']);
      // Used: a second enrollment through it adds nothing.
      expect(await store.approverPasskeys.enroll(digest, passkey('cred-2'), T0 + 2)).toBeUndefined();
      expect(await store.approverPasskeys.passkey('cred-2')).toBeUndefined();
      expect(await store.approverPasskeys.openEnrollment(digest, T0 + 2)).toBeUndefined();

      const late = await issueApproverEnrollment(store.approverPasskeys, { subject: 'erin', now: T0, ttlMs: 5 * MIN });
      expect(await store.approverPasskeys.enroll(enrollmentDigest(late.token)!, passkey('cred-3'), T0 + 5 * MIN)).toBeUndefined();
      expect(await store.approverPasskeys.credentialIdsOf('erin')).toEqual([]);
    });

    it('of two enrollments racing through one link, exactly one enrolls (PostgreSQL: from two pools)', async () => {
      // SQLite: one process's connections would wait on each other synchronously (better-sqlite3
      // blocks the event loop on the lock); its writers are serialized by the engine on one connection.
      const other = b.name === 'postgres' ? await db.open({ poolSize: 2 }) : store;
      try {
        const link = await issueApproverEnrollment(store.approverPasskeys, { subject: 'dave', now: T0 });
        const digest = enrollmentDigest(link.token)!;
        const results = await Promise.all([
          store.approverPasskeys.enroll(digest, passkey('race-a'), T0 + 1),
          other.approverPasskeys.enroll(digest, passkey('race-b'), T0 + 1),
        ]);
        expect(results.filter(Boolean)).toHaveLength(1);
        expect(await store.approverPasskeys.credentialIdsOf('dave')).toHaveLength(1);
      } finally {
        if (other !== store) await other.close();
      }
    });

    it('moves a signature counter only from the value read (a stale or cloned counter changes nothing)', async () => {
      const link = await issueApproverEnrollment(store.approverPasskeys, { subject: 'dave', now: T0 });
      await store.approverPasskeys.enroll(enrollmentDigest(link.token)!, passkey('cred-c', 4), T0);
      expect(await store.approverPasskeys.recordUse('cred-c', 4, 5, T0 + MIN)).toBe(true);
      expect(await store.approverPasskeys.recordUse('cred-c', 4, 6, T0 + 2 * MIN)).toBe(false);
      expect(await store.approverPasskeys.passkey('cred-c')).toMatchObject({ counter: 5, last_used_at: T0 + MIN });
      expect(await store.approverPasskeys.recordUse('unknown', 0, 1, T0)).toBe(false);
    });
  });
}
