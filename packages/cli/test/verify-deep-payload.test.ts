/**
 * `vrp verify --json` against a hostile node whose validly signed payload is nested thousands of
 * levels deep: the verifier reaches a verdict, and the CLI must print it — reporting the payload
 * by its digest, never by its content — instead of failing to serialise the result.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createJwsSigner, ed25519PrivateJwkFromSeed, publicJwkOf, sha256, sha256Hex } from '@vrpkit/core';
import { createDevCa, issueServerCertificate } from '@vrpkit/node';
import { DISCOVERY_PATH, JWKS_PATH, OFFER_ENDPOINT_PATH } from '@vrpkit/protocol';
import { runVrpInProcess } from '@vrpkit/testkit/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DOMAIN = 'deep-payload.example';
const KID = 'deep-payload-key';
/** Past the ~5,000 levels where JSON.stringify runs out of stack. */
const DEPTH = 8_000;
const NOW = '2027-06-01T10:01:00Z';

const key = ed25519PrivateJwkFromSeed(sha256('vrpkit deep payload test key'));
const payload = `{"kind":"verified_stay_offer","protocol_version":"0.1","canonical_domain":"${DOMAIN}","generated_at":"2027-06-01T10:00:00Z","valid_until":"2027-06-01T10:15:00Z","notes":${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}}`;
const jws = createJwsSigner(key, KID).sign(payload);
const envelope = `{"kind":"signed_verified_stay_offer","protocol_version":"0.1","offer":${payload},"signature":{"format":"jws_compact","alg":"EdDSA","kid":"${KID}","jws":"${jws}"}}`;

let dir: string;
let server: Server;
let reach: string[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vrpkit-deep-payload-'));
  const ca = await createDevCa({ commonName: 'vrpkit deep payload test CA' });
  const cert = await issueServerCertificate(ca, [DOMAIN]);
  writeFileSync(join(dir, 'ca.pem'), ca.certPem);
  const origin = `https://${DOMAIN}`;
  const bodies: Record<string, string> = {
    [DISCOVERY_PATH]: JSON.stringify({
      protocol: 'vacation-rental-protocol',
      protocol_version: '0.1',
      canonical_domain: DOMAIN,
      jwks_url: `${origin}${JWKS_PATH}`,
      verified_stay_offer_endpoint: `${origin}${OFFER_ENDPOINT_PATH}`,
    }),
    [JWKS_PATH]: JSON.stringify({ keys: [publicJwkOf(key, KID)] }),
    [OFFER_ENDPOINT_PATH]: envelope,
  };
  server = createServer({ key: cert.keyPem, cert: cert.certPem }, (req, res) => {
    const body = bodies[new URL(req.url ?? '/', origin).pathname];
    res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' }).end(body ?? '{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  reach = ['--connect-to', `${DOMAIN}:443:127.0.0.1:${(server.address() as AddressInfo).port}`, '--cacert', join(dir, 'ca.pem')];
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  rmSync(dir, { recursive: true, force: true });
});

describe('vrp verify --json prints internal_error on a validly signed, deeply nested payload', () => {
  it('prints the verdict, with the payload reported by the SHA-256 of its signed bytes', async () => {
    const r = await runVrpInProcess([
      'verify',
      `https://${DOMAIN}`,
      '--check-in',
      '2027-07-01',
      '--check-out',
      '2027-07-04',
      '--guests',
      '2',
      '--json',
      '--now',
      NOW,
      ...reach,
    ]);
    const out = JSON.parse(r.stdout) as {
      error?: unknown;
      status: string;
      code: string | null;
      safe_to_quote: boolean;
      offer: unknown;
      verification: { status: string; payload: unknown };
    };
    expect(out.error).toBeUndefined();
    // The envelope's `offer` cannot be compared this deep, so the verdict is a fail-closed payload mismatch.
    expect(out.status).toBe('invalid');
    expect(out.code).toBe('payload_offer_mismatch');
    expect(out.safe_to_quote).toBe(false);
    expect(r.code).toBe(2);
    const digest = { omitted: 'not_serialisable', sha256: sha256Hex(payload) };
    expect(out.verification.payload).toEqual(digest);
    if (out.offer !== null) expect(out.offer).toEqual(digest);
    expect(r.stdout).not.toContain('[[[[');
    expect(r.stderr).toBe('');
  }, 60_000);
});
