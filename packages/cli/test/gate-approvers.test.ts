/**
 * `vrp gate approvers enroll` and the sign-in flags of `vrp gate ui` (issue 33 item 3; the same
 * flags are `vrp gate proxy --ui`'s): the enrollment link is printed once and only its digest is
 * stored; bad flag combinations are usage errors (exit 64) before anything starts; a page with
 * known approvers prints no token, accepts none, and sends a person to the OpenID provider named
 * (a real `oidc-provider`) or to the passkey sign-in; `vrp gate audit verify` passes on the store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha256Base64url } from '@vrpkit/core';
import { openSqliteStore } from '@vrpkit/gate';
import { runVrpInProcess, vrpCli } from '@vrpkit/testkit/cli';
import { startAuthorizationServer, type TestAuthorizationServer } from '@vrpkit/testkit/oidc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const tmp = mkdtempSync(join(tmpdir(), 'vrp-gate-approvers-'));
const store = join(tmp, 'gate.db');
let as: TestAuthorizationServer;

beforeAll(async () => {
  await (await openSqliteStore(store)).close();
  as = await startAuthorizationServer({
    clients: [],
    extraClients: [
      {
        client_id: 'approvals-page',
        token_endpoint_auth_method: 'none',
        redirect_uris: ['http://127.0.0.1:1/signin/oidc/callback'],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
  });
});
afterAll(async () => {
  await as?.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** `vrp gate ui … --json` in a child process: the JSON it prints once listening, and the child. */
async function startUi(args: string[]) {
  const run = vrpCli(['gate', 'ui', '--store', store, '--listen', '127.0.0.1:0', '--json', ...args]);
  let out = '';
  const started = await new Promise<{ url: string; token?: string; open: string }>((resolve, reject) => {
    run.child.stdout!.on('data', (d) => {
      out += d;
      try {
        resolve(JSON.parse(out));
      } catch {}
    });
    run.child.on('exit', () => reject(new Error(`vrp gate ui exited: ${out} ${run.stderr()}`)));
  });
  return {
    started,
    stop: async () => {
      run.child.kill('SIGTERM');
      await run.exited;
    },
  };
}

describe('vrp gate approvers enroll', () => {
  it('prints a one-time link for the subject under --page; the store keeps only the digest of its token', async () => {
    const r = await runVrpInProcess([
      'gate',
      'approvers',
      'enroll',
      '--store',
      store,
      '--subject',
      'dave',
      '--page',
      'http://localhost:8932/',
      '--json',
    ]);
    expect(r.code).toBe(0);
    const { link, subject } = JSON.parse(r.stdout) as { link: string; subject: string };
    expect(subject).toBe('dave');
    const url = new URL(link);
    expect(`${url.origin}${url.pathname}`).toBe('http://localhost:8932/approvers/enroll');
    const token = url.searchParams.get('token')!;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const s = await openSqliteStore(store);
    try {
      expect(await s.approverPasskeys.openEnrollment(sha256Base64url(token), Date.now())).toMatchObject({ subject: 'dave', used_at: null });
      expect(await s.approverPasskeys.openEnrollment(token, Date.now())).toBeUndefined();
    } finally {
      await s.close();
    }
  });

  it('bad input is a usage error, nothing stored; a missing store is not created', async () => {
    expect((await runVrpInProcess(['gate', 'approvers', 'enroll', '--store', store, '--subject', ' '])).code).toBe(64);
    expect((await runVrpInProcess(['gate', 'approvers', 'enroll', '--store', store, '--subject', 'd', '--ttl', 'soon'])).code).toBe(64);
    expect((await runVrpInProcess(['gate', 'approvers', 'enroll', '--store', store, '--subject', 'd', '--page', 'nope'])).code).toBe(64);
    const missing = await runVrpInProcess(['gate', 'approvers', 'enroll', '--store', join(tmp, 'none.db'), '--subject', 'd']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no_store');
  });
});

describe('the sign-in flags of vrp gate ui and vrp gate proxy', () => {
  it.each([
    [['--approvers', 'alice'], '--approvers and --approver-claim need --approver-oidc-issuer or --approver-passkeys'],
    [['--approver-passkeys'], 'signed-in approvers need --approvers or --approver-claim'],
    [['--approver-oidc-issuer', 'https://id.example'], '--approver-oidc-issuer and --approver-oidc-client-id go together'],
    [['--approver-oidc-issuer', 'http://id.example', '--approver-oidc-client-id', 'c', '--approvers', 'a'], 'must be https://'],
    [['--approver-passkeys', '--approver-claim', 'groups=approvers'], 'a passkey carries no claims'],
    [['--approver-oidc-issuer', 'https://id.example', '--approver-oidc-client-id', 'c', '--approver-claim', 'groups'], 'NAME=VALUE'],
  ])('vrp gate ui %j is a usage error', async (flags, message) => {
    const r = await runVrpInProcess(['gate', 'ui', '--store', store, '--listen', '127.0.0.1:0', ...flags]);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain(message);
  });

  it('vrp gate proxy: the approver flags need --ui', async () => {
    const r = await runVrpInProcess([
      'gate',
      'proxy',
      '--store',
      store,
      '--policy',
      'x.json',
      '--approver-passkeys',
      '--approvers',
      'a',
      '--',
      'true',
    ]);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain('need --ui');
  });

  it('with known approvers the page prints no token and accepts none; it sends a person to the provider or to the passkey sign-in', async () => {
    const ui = await startUi([
      '--approver-oidc-issuer',
      as.issuer,
      '--approver-oidc-client-id',
      'approvals-page',
      '--approver-oidc-scope',
      'groups',
      '--approver-claim',
      'groups=approvers',
      '--approver-passkeys',
    ]);
    try {
      expect(ui.started.token).toBeUndefined();
      expect(ui.started.open).toBe(ui.started.url);
      const page = await fetch(`${ui.started.url}?token=x`, { redirect: 'manual' });
      expect(page.status).toBe(401);
      const html = await page.text();
      expect(html).toContain('data-ceremony="signin"');
      expect(html).toContain('href="/signin/oidc?return=%2F"');
      expect(page.headers.get('content-security-policy')).toMatch(/script-src 'nonce-[^']+'/);
      const start = await fetch(`${ui.started.url}signin/oidc`, { redirect: 'manual' });
      const authorize = new URL(start.headers.get('location')!);
      expect(authorize.origin).toBe(as.issuer);
      expect(authorize.searchParams.get('client_id')).toBe('approvals-page');
      expect(authorize.searchParams.get('scope')).toBe('openid groups');
      expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    } finally {
      await ui.stop();
    }
    expect((await runVrpInProcess(['gate', 'audit', 'verify', '--store', store, '--json'])).code).toBe(0);
  });
});
