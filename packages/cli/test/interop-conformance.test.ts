/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance` 0.2.0-alpha.12), server
 * scenarios of each revision's requirement set (2025-11-25 and 2026-07-28), against: the reference
 * server `server-everything` connected to directly (the baseline), `vrp gate proxy --listen` in
 * front of it, a vrpkit node and a platform tenant (issue 32 item 8). The expectations table
 * (support/mcp-conformance-table.ts, rendered into docs/conformance.md) says per scenario,
 * revision and target: pass, n.a. with the reason, or a known failure with the reason. A scenario
 * expected to pass that fails is a regression and fails this test; a scenario the suite gains or
 * drops fails it too, until the table says what it means.
 *
 * Slow (the suite runs eight times; about two minutes): runs when `VRPKIT_TEST_CONFORMANCE=1`
 * (`.ci/run` sets it) and a Node >= 22.19 is at hand (`VRPKIT_NODE24`, which `.ci/run` installs);
 * skips with a note otherwise. `VRPKIT_CONFORMANCE_OBSERVED=FILE` writes what each run observed, to
 * update the table from.
 */
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConformanceSuite, type ScenarioOutcome, type SuiteClient } from './support/conformance-suite.js';
import type { ListeningProxy } from './support/gate-proxy.js';
import {
  modernNode,
  proxyInFrontOfEverything,
  REVISIONS,
  serveEverythingHttp,
  serveVrpTargets,
  type VrpTargets,
} from './support/interop.js';
import { COLUMN_OF, CONFORMANCE_TARGETS, type ConformanceTarget, EXPECTED, type Expectation } from './support/mcp-conformance-table.js';

const enabled = process.env.VRPKIT_TEST_CONFORMANCE === '1';
const node = modernNode();
if (!enabled) console.warn('interop-conformance: VRPKIT_TEST_CONFORMANCE is unset; the official MCP conformance suite is not run');
else if (!node) console.warn('interop-conformance: the suite needs Node >= 22.19 and VRPKIT_NODE24 is unset; not run');

/** What a cell expects and the outcome did not give: `pass` is every check, otherwise the checks it names. */
function unmet(expected: Expectation, outcome: ScenarioOutcome | undefined, scenario: string): string[] {
  if (expected === 'pass') return outcome?.passed ? [] : [`${scenario}: ${outcome?.failures.join('; ')}`];
  return (expected.checks ?? []).filter((c) => !outcome?.succeeded.includes(c)).map((c) => `${scenario}: ${c} did not succeed`);
}

const observed: Record<string, Record<string, Record<string, ScenarioOutcome>>> = {};

describe.skipIf(!enabled || !node)('the official MCP conformance suite, server scenarios', () => {
  let vrp: VrpTargets;
  let everything: { url: string; close(): Promise<void> };
  let proxy: ListeningProxy;
  beforeAll(async () => {
    [vrp, everything, proxy] = await Promise.all([serveVrpTargets(), serveEverythingHttp(), proxyInFrontOfEverything()]);
  }, 300_000);
  afterAll(async () => {
    await proxy?.stop();
    await everything?.close();
    await vrp?.close();
    const file = process.env.VRPKIT_CONFORMANCE_OBSERVED;
    if (file) writeFileSync(file, `${JSON.stringify(observed, null, 2)}\n`);
  });

  /** Where each target is and how the suite's client reaches it. */
  function target(name: ConformanceTarget): { url: string; client: SuiteClient } {
    if (name === 'everything') return { url: everything.url, client: {} };
    if (name === 'proxy') return { url: proxy.url, client: { bearer: { origin: new URL(proxy.url).origin, token: proxy.token } } };
    return { url: vrp[name].url, client: { resolve: vrp.resolve, caFile: vrp.caFile } };
  }

  describe.each(REVISIONS)('requirement set %s', (revision) => {
    it.each(CONFORMANCE_TARGETS)(
      '%s: every scenario expected to pass passes',
      async (name) => {
        const { url, client } = target(name);
        const outcomes = await runConformanceSuite(node as string, url, revision, client);
        observed[revision] ??= {};
        (observed[revision] as Record<string, Record<string, ScenarioOutcome>>)[name] = Object.fromEntries(outcomes);
        const table = EXPECTED[revision];
        // The table names exactly the scenarios this suite version runs for the revision.
        expect([...outcomes.keys()].sort()).toEqual(Object.keys(table).sort());
        const column = COLUMN_OF[name];
        const regressions = Object.entries(table).flatMap(([scenario, row]) => unmet(row[column], outcomes.get(scenario), scenario));
        expect(regressions, `${name} on ${revision}: expected to pass`).toEqual([]);
        const newlyPassing = Object.entries(table)
          .filter(([scenario, row]) => row[column] !== 'pass' && outcomes.get(scenario)?.passed)
          .map(([scenario]) => scenario);
        if (newlyPassing.length > 0)
          console.warn(`interop-conformance: ${name} on ${revision} now passes ${newlyPassing.join(', ')}: mark them pass in the table`);
      },
      300_000,
    );
  });
});
