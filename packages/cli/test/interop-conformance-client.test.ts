/**
 * The official MCP conformance suite's CLIENT scenarios (0.2.0-alpha.12) with `vrp gate proxy`'s
 * downstream client as the client under test (issue 32 item 8): the suite starts each scenario's
 * server and runs support/conformance-proxy-client.ts against it, which puts the proxy in front
 * (tools pinned) and drives the agent's calls through it. The expectations are the second table
 * of support/mcp-conformance-table.ts (`CLIENT_EXPECTED`, in docs/conformance.md): a scenario
 * expected to pass that fails is a regression; a scenario the suite gains or drops fails too.
 * The `auth/*` scenarios run the proxy with downstream OAuth (issue 33 item 4).
 *
 * Slow (each scenario starts the proxy from source: 5–20 s each on a 2-core machine, about 2.5 min
 * for the thirteen, a minute each under heavy load): runs when `VRPKIT_TEST_CONFORMANCE_CLIENT=1`
 * and a Node >= 22.19 is at hand (`VRPKIT_NODE24`); skips with a note otherwise.
 */
import { describe, expect, it } from 'vitest';
import { listClientScenarios, runConformanceClientScenario } from './support/conformance-suite.js';
import { vrpArgs } from './support/gate-proxy-args.js';
import { modernNode, REVISIONS } from './support/interop.js';
import { CLIENT_EXPECTED } from './support/mcp-conformance-table.js';

const enabled = process.env.VRPKIT_TEST_CONFORMANCE_CLIENT === '1';
const node = modernNode();
if (!enabled) console.warn('interop-conformance-client: VRPKIT_TEST_CONFORMANCE_CLIENT is unset; the client scenarios are not run');
else if (!node) console.warn('interop-conformance-client: the suite needs Node >= 22.19 and VRPKIT_NODE24 is unset; not run');

/**
 * The client command, by scenario: this Node (20, where vrpkit runs) with tsx and the agent-side
 * script, then the URL the suite appends; for `auth/*` the operator's side instead (the proxy with
 * `--downstream-oauth service`, its authorization link opened as a person would:
 * support/conformance-auth-client.mjs, plain JavaScript).
 */
const commandFor = (scenario: string) =>
  scenario.startsWith('auth/')
    ? [process.execPath, 'packages/cli/test/support/conformance-auth-client.mjs'].join(' ')
    : [process.execPath, ...vrpArgs.slice(0, 3), 'packages/cli/test/support/conformance-proxy-client.ts'].join(' ');
const SCENARIO_TIMEOUT_MS = 150_000;

describe.skipIf(!enabled || !node)(
  "the official MCP conformance suite, client scenarios through the gate proxy's downstream client",
  () => {
    describe.each(REVISIONS)('requirement set %s', (revision) => {
      it('the table names exactly the client scenarios the suite lists', async () => {
        expect(Object.keys(CLIENT_EXPECTED[revision]).sort()).toEqual((await listClientScenarios(node as string, revision)).sort());
      }, 60_000);

      const runs = Object.entries(CLIENT_EXPECTED[revision]);
      it.each(runs)(
        '%s',
        async (scenario, expected) => {
          const outcome = await runConformanceClientScenario(node as string, commandFor(scenario), scenario, revision, SCENARIO_TIMEOUT_MS);
          if (expected === 'pass') expect(outcome.failures, outcome.log.slice(-3000)).toEqual([]);
          if (expected === 'pass') expect(outcome.passed, outcome.log.slice(-3000)).toBe(true);
          else for (const check of expected.checks ?? []) expect(outcome.succeeded, outcome.log.slice(-3000)).toContain(check);
          if (expected !== 'pass' && outcome.passed)
            console.warn(`interop-conformance-client: ${scenario} on ${revision} now passes: mark it pass in the table`);
        },
        SCENARIO_TIMEOUT_MS + 90_000,
      );
    });
  },
);
