/**
 * Running the official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in the
 * root package.json) against one server URL at one revision's requirement set, as its README says:
 * `conformance server --url URL --requirements REVISION -o DIR`. Each scenario writes
 * `server-<scenario>-<timestamp>/checks.json`; a scenario passes when none of its checks failed.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@vrpkit/testkit/cli';
import { clientPreload, type Revision } from './interop.js';

const suiteBin = join(repoRoot, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

export interface ScenarioOutcome {
  /** A check succeeded and none failed. */
  passed: boolean;
  /** The ids of the checks that succeeded (each once). */
  succeeded: string[];
  /** `check-id: message` of each failed check. */
  failures: string[];
}

/** How the suite's process reaches the server: see conformance-client.mjs. */
export interface SuiteClient {
  resolve?: string[];
  caFile?: string;
  bearer?: { origin: string; token: string };
}

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

/** The outcome of every scenario the suite ran, by scenario name. */
export async function runConformanceSuite(
  node: string,
  url: string,
  revision: Revision,
  client: SuiteClient = {},
): Promise<Map<string, ScenarioOutcome>> {
  const out = mkdtempSync(join(tmpdir(), 'vrpkit-mcp-conformance-'));
  const env = {
    ...process.env,
    VRPKIT_CONFORMANCE_RESOLVE: (client.resolve ?? []).join(','),
    VRPKIT_CONFORMANCE_CA: client.caFile ?? '',
    // node:https trusts the dev CAs too (the preload's dispatcher covers fetch and undici only).
    ...(client.caFile ? { NODE_EXTRA_CA_CERTS: client.caFile } : {}),
    VRPKIT_CONFORMANCE_BEARER: client.bearer ? `${client.bearer.origin} ${client.bearer.token}` : '',
  };
  try {
    // The exit status only says whether something failed; the per-scenario files say what.
    const log = await new Promise<string>((resolve) => {
      execFile(
        node,
        ['--import', clientPreload, suiteBin, 'server', '--url', url, '--requirements', revision, '-o', out],
        { cwd: out, env, timeout: 240_000, maxBuffer: 32 * 1024 * 1024 },
        (_error, stdout, stderr) => resolve(`${stdout}\n${stderr}`),
      );
    });
    const outcomes = readOutcomes(out);
    if (outcomes.size === 0) throw new Error(`the conformance suite ran no scenario against ${url}:\n${log.slice(-4000)}`);
    return outcomes;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

function readOutcomes(dir: string): Map<string, ScenarioOutcome> {
  const outcomes = new Map<string, ScenarioOutcome>();
  for (const entry of readdirSync(dir)) {
    const scenario = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry)?.[1];
    if (!scenario) continue;
    const file = join(dir, entry, 'checks.json');
    // A scenario that crashed before judging anything leaves its folder without checks.
    const checks = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Check[]) : [];
    const failures = checks.filter((c) => c.status === 'FAILURE').map((c) => `${c.id}: ${c.errorMessage ?? 'failed'}`);
    const succeeded = [...new Set(checks.filter((c) => c.status === 'SUCCESS').map((c) => c.id))];
    // Only checks that ran and succeeded make a pass: a scenario that judged nothing proves nothing.
    outcomes.set(scenario, { passed: failures.length === 0 && succeeded.length > 0, succeeded, failures });
  }
  return outcomes;
}
