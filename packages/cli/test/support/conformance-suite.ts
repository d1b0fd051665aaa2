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
    if (scenario) outcomes.set(scenario, outcomeOf(join(dir, entry, 'checks.json')));
  }
  return outcomes;
}

/** One scenario's outcome from its `checks.json` (absent when it crashed before judging anything). */
function outcomeOf(file: string): ScenarioOutcome {
  const checks = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Check[]) : [];
  const failures = checks.filter((c) => c.status === 'FAILURE').map((c) => `${c.id}: ${c.errorMessage ?? 'failed'}`);
  const succeeded = [...new Set(checks.filter((c) => c.status === 'SUCCESS').map((c) => c.id))];
  // Only checks that ran and succeeded make a pass: a scenario that judged nothing proves nothing.
  return { passed: failures.length === 0 && succeeded.length > 0, succeeded, failures };
}

/**
 * The suite's CLIENT scenario `scenario` at `revision`, with `command` as the client under test
 * (`conformance client --command CMD --scenario NAME --spec-version REVISION -o DIR`; the suite
 * appends its scenario server's URL to the command). Run from the repository root, so the command
 * may load tsx. Resolves with the scenario's outcome and the suite's log.
 */
export async function runConformanceClientScenario(
  node: string,
  command: string,
  scenario: string,
  revision: Revision,
  timeoutMs: number,
): Promise<ScenarioOutcome & { log: string }> {
  const out = mkdtempSync(join(tmpdir(), 'vrpkit-mcp-conformance-client-'));
  try {
    const args = [
      suiteBin,
      'client',
      '--command',
      command,
      '--scenario',
      scenario,
      '--spec-version',
      revision,
      '--timeout',
      String(timeoutMs),
      '-o',
      out,
    ];
    const log = await new Promise<string>((resolve) => {
      execFile(node, args, { cwd: repoRoot, timeout: timeoutMs + 60_000, maxBuffer: 32 * 1024 * 1024 }, (_error, stdout, stderr) =>
        resolve(`${stdout}\n${stderr}`),
      );
    });
    const folder = readdirSync(out, { recursive: true, withFileTypes: true }).find((e) => e.isFile() && e.name === 'checks.json');
    return { ...outcomeOf(folder ? join(folder.parentPath, folder.name) : join(out, 'none')), log };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** The CLIENT scenarios the suite lists for `revision` (dated ones; extensions are not a revision's). */
export async function listClientScenarios(node: string, revision: Revision): Promise<string[]> {
  const listing = await new Promise<string>((resolve, reject) =>
    execFile(node, [suiteBin, 'list'], { cwd: repoRoot }, (error, stdout) => (error ? reject(error) : resolve(stdout))),
  );
  const section = listing.slice(listing.indexOf('Client scenarios'), listing.indexOf('Authorization server scenarios'));
  return [...section.matchAll(/^\s+- (\S+) \[([^\]]*)\]$/gm)]
    .filter((m) => (m[2] ?? '').split(',').includes(revision))
    .map((m) => m[1] as string);
}
