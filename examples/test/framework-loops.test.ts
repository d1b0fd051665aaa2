import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RecordedAgentsModel, recordedAiSdkModel, recordedTurns, runAgentsSdkLoop, runAiSdkLoop } from '../src/framework-loops.js';
import { type ExampleHost, newWorld, openExampleHost } from '../src/index.js';

let dir: string;
let host: ExampleHost;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'examples-frameworks-'));
  host = await openExampleHost(dir);
});
afterEach(async () => {
  await host.gate.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The world after the recorded story: the search and Alice's mail happened; the injected forward and the payout did not. */
function expectStoryOutcome(world: ReturnType<typeof newWorld>): void {
  expect(world.searches).toEqual(['open invoice vendor-441']);
  expect(world.outbox.map((m) => m.to)).toEqual(['alice@example.com']);
  expect(world.payouts).toEqual([]);
}

describe('framework loops (recorded model turns)', () => {
  it('Vercel AI SDK: the gated tools run the search and the approved mail; the model gets the two denies as tool errors', async () => {
    const world = newWorld();
    const r = await runAiSdkLoop({ host, world, model: recordedAiSdkModel(recordedTurns()) });
    expectStoryOutcome(world);
    expect(r.denied).toEqual(['EF_INSTRUCTION_PROVENANCE_FAILURE', 'EF_NOT_AUTHORIZED']);
  });

  it('OpenAI Agents SDK: the same calls through the SDK loop, and the model sees the EF codes in the tool outputs', async () => {
    const world = newWorld();
    const model = new RecordedAgentsModel(recordedTurns());
    await runAgentsSdkLoop({ host, world, model });
    expectStoryOutcome(world);
    const lastInput = JSON.stringify(model.requests.at(-1)!.input);
    expect(lastInput).toContain('EF_INSTRUCTION_PROVENANCE_FAILURE');
    expect(lastInput).toContain('EF_NOT_AUTHORIZED');
  });
});
