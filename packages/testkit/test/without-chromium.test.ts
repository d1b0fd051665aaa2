/**
 * The README's test command on a machine without Chromium: every test file that needs the
 * browser passes, its browser tests reported as skipped (with a note naming `VRPKIT_CHROMIUM`),
 * as the PostgreSQL tests are without `VRPKIT_TEST_PG_URL`. Runs only those files, in a child
 * vitest whose browser path points nowhere.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The tests that need Chromium, per file: exactly these are skipped without it. */
const BROWSER_TESTS: Record<string, string[]> = {
  'packages/agent/test/surfaces.test.ts': [
    'WebMCP: Chromium invokes the tool the page registered, and its envelope verifies',
    'the three surfaces name the capability with one identical string',
    'the WebMCP tool rejects invalid input itself (browsers do not validate): unverified, nothing quoted',
    'quotes through the form and offers the signed direct_booking_url as the booking button, only after a quote',
  ],
  // These two judge MCP and A2A without a browser and WebMCP with one: nothing is skipped, the WebMCP surface is left out.
  'packages/cli/test/conformance-platform.test.ts': [],
  'packages/conformance/test/broken-nodes.test.ts': [],
  'packages/cli/test/gate-approvals.test.ts': [
    'in Chromium: refused without the token; the token opens the page with the exact arguments as text; a forged CSRF token is refused; Approve runs the waiting call once',
  ],
  'packages/cli/test/verify-via.test.ts': ['--via all --json: four rows, every one the node’s own voice, verified and safe; exit 0'],
  'packages/gate/test/computer-call.test.ts': [
    'approved submit runs once; an edited field or a moved origin is denied and nothing is posted',
  ],
  'packages/gate/test/scenarios.test.ts': ['expect deny (EF_DESTINATION_MISMATCH); the click is never sent to the new origin'],
  'packages/gate/test/approval-link-page.test.ts': [
    'open the link, sign in, approve; the reused link approves nothing — on a desktop and at 390 px',
  ],
  // Without a browser the person approves over plain HTTP: nothing is skipped.
  'packages/gate/test/proxy-approval-in-client.test.ts': [],
  // The console behind the proxy without a browser runs; only its Chromium sign-in is skipped.
  'packages/node/test/console-proxy.test.ts': [
    'enrolls a passkey and signs in through the proxy at /console, every page and form under the path',
  ],
  'packages/node/test/console-browser.test.ts': [
    'listens on localhost and, without a session, shows nothing but the sign-in page',
    'enrolls a passkey through the one-time link and is signed in; the link works only once',
    'signs out, and signs in again with the enrolled passkey',
    'shows a pending request with the guest text inert and visible; confirming it turns held nights into booked',
    'confirms a pending booking from a UCP session: the calendar changes, and the guest and the host are mailed',
    "declines a pending booking with a reason: the guest's mail carries it, and the reason is inert on the page",
    'blocks a night by hand; the next offer for it is signed not_available',
    'refuses a change posted without its form token, or with the token of another form, and changes nothing',
    'removes the block by hand; the night is free again and offered',
    "quotes a stay with the offer's own judgement, lists a broken property file's errors, compares a changed one and publishes it",
    'rotates the key behind a confirmation step; offers signed by the new key still verify',
    'says a feed is stale once its last sync is older than the calendar may be, and fresh after "sync now"',
    'charts the offers asked per surface and the refusals by code, from counters holding no request data',
    'lists the passkeys and removes one behind a confirmation step, never the last; the removed passkey’s session ends',
    'has no serious or critical axe-core violation on any page, at 390 and 1280 px',
  ],
  'packages/gate/test/approvers-browser.test.ts': [
    'enrolls a passkey through the one-time link and is signed in; the link works only once',
    'signs in with the passkey from an approval link, lands at that act and approves it',
    "signs in with OpenID Connect from an approval link (the provider's pages), lands back at that act and approves it",
    'a signed-in person without the role sees the act and no button to decide it',
    'an approver cannot approve an act of their own where the policy forbids it: refused with the code, nothing decided',
    'the audit records each decision with subject and method, and the chain verifies; no foreign request, no CSP violation',
  ],
  'packages/platform/test/console-browser.test.ts': [
    'holds 10,000 tenants and serves the one to find',
    'listens on localhost and, without a session, shows nothing but the sign-in page',
    'enrolls an operator passkey through the one-time link and is signed in; the link works only once',
    'signs out, and signs in again with the enrolled passkey',
    'pages through the tenants and finds one among 10,000 by its domain',
    'refuses a change posted without its form token, or with the token of another form, and changes nothing',
    'rotates the tenant key behind its confirmation step, audited as the console operator',
    'disables the tenant behind its confirmation step; its next offer request is refused',
    'lets a support passkey read everything and change nothing',
    'plots fleet health from the metrics the platform exports',
    'has no serious or critical axe-core violation on any operator page, at 390 and 1280 px',
  ],
  'packages/node/test/ucp-guest-page.test.ts': [
    'shows the session’s totals and terms, confirms with the mailed code, and only then holds the stay',
  ],
  'bench/test/report.test.ts': ['in Chromium: every chart parses as SVG (no parser error) and draws as an image of its size'],
};

interface JsonReport {
  numFailedTests: number;
  numPassedTests: number;
  testResults: { name: string; assertionResults: { title: string; status: string }[] }[];
}

const out = mkdtempSync(join(tmpdir(), 'vrpkit-without-chromium-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('the test suite on a machine without Chromium', () => {
  it('every test file that uses the browser is in the list (it imports the test kit’s Chromium)', () => {
    const files = ['packages', 'bench']
      .flatMap((top) => readdirSync(join(ROOT, top), { recursive: true, encoding: 'utf8' }).map((f) => join(top, f)))
      .filter((f) => /\/test\/.*\.test\.ts$/.test(f))
      .filter((f) => /^import .* from '@vrpkit\/testkit\/browser';$/m.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(files.sort()).toEqual(Object.keys(BROWSER_TESTS).sort());
  });

  it('the browser test files pass, with exactly their browser tests skipped', async () => {
    const json = join(out, 'report.json');
    const vitest = join(ROOT, 'node_modules/vitest/vitest.mjs');
    const files = Object.keys(BROWSER_TESTS);
    const run = await new Promise<{ code: number; output: string }>((done) => {
      execFile(
        process.execPath,
        [vitest, 'run', ...files, '--reporter=default', '--reporter=json', `--outputFile.json=${json}`],
        { cwd: ROOT, env: { ...process.env, VRPKIT_CHROMIUM: '/nonexistent/chromium' }, maxBuffer: 64 * 1024 * 1024, timeout: 540_000 },
        (error, stdout, stderr) => done({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, output: stdout + stderr }),
      );
    });
    const report = JSON.parse(readFileSync(json, 'utf8')) as JsonReport;
    const failed = report.testResults.flatMap((f) => f.assertionResults.filter((a) => a.status === 'failed').map((a) => a.title));
    expect(failed).toEqual([]);
    expect(run.code).toBe(0);
    const skipped = Object.fromEntries(
      report.testResults.map((f) => [
        relative(ROOT, f.name),
        f.assertionResults.filter((a) => a.status === 'skipped' || a.status === 'pending').map((a) => a.title),
      ]),
    );
    expect(skipped).toEqual(BROWSER_TESTS);
    expect(report.numPassedTests).toBeGreaterThan(20);
    // Each file said why, naming the variable.
    expect(
      run.output.match(/no executable Chromium at \/nonexistent\/chromium.*SKIPPED \(set VRPKIT_CHROMIUM to run them\)/g),
    ).toHaveLength(15);
  }, 600_000);
});
