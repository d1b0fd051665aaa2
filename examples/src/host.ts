/**
 * The example host: a real Gate on a SQLite file, the example policy, the person who decides
 * escalated acts, and the per-call instruction provenance. Shared by the Anthropic- and the
 * OpenAI-shaped loops.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { asRecord, generateEd25519Jwk } from '@vrpkit/core';
import {
  type AgentCandidateAct,
  digestArguments,
  Gate,
  type InstructionProvenance,
  loadPolicy,
  type MapContext,
  openSqliteStore,
} from '@vrpkit/gate';

export const EXAMPLE_POLICY_FILE = fileURLToPath(new URL('../gate-policy.yaml', import.meta.url));

export const USER_PROMPT = 'Find the open invoice from vendor-441, email a short summary of it to alice@example.com, and pay it.';

/**
 * The person who decides escalated acts. The Gate hands over the act, which carries only the
 * arguments' digest; the desk shows the person the arguments it saw under that digest, so what
 * is approved is exactly that digest. This scripted person approves mail to recipients the user
 * named and refuses payouts (a payout needs a real approval: `vrp gate approve ACT_ID`).
 */
export class ApprovalDesk {
  readonly #seen = new Map<string, { name: string; args: unknown }>();
  readonly decisions: Array<{ candidate_act_id: string; tool: string; approved: boolean }> = [];

  constructor(private readonly userTurn: string) {}

  /** Remember a call's arguments under their digest (in memory only; never logged). */
  note(name: string, args: unknown): void {
    try {
      this.#seen.set(digestArguments(args).value, { name, args });
    } catch {
      // Non-I-JSON arguments are denied by the gate before anyone is asked.
    }
  }

  readonly approve = async (act: AgentCandidateAct): Promise<boolean> => {
    const call = this.#seen.get(act.arguments_digest.value);
    const approved =
      call !== undefined &&
      call.name === act.tool.tool_id &&
      act.consequence_class === 'COMMUNICATION' &&
      this.userTurn.includes(String(asRecord(call.args)?.to));
    this.decisions.push({ candidate_act_id: act.candidate_act_id, tool: act.tool.tool_id, approved });
    return approved;
  };
}

/** Tool-Use Binding draft, T-A: a recipient the user did not name came from somewhere else — the retrieved content. */
export function provenanceFor(userTurn: string) {
  return ({ name, args }: { name: string; args: unknown }): InstructionProvenance => {
    const to = asRecord(args)?.to;
    if (name === 'email_send' && (typeof to !== 'string' || !userTurn.includes(to))) return { source_type: 'retrieval' };
    return { source_type: 'user' };
  };
}

export interface ExampleHost {
  gate: Gate;
  desk: ApprovalDesk;
  context(model: string, runtime: string): MapContext;
}

export async function openExampleHost(dataDir: string, userTurn = USER_PROMPT): Promise<ExampleHost> {
  const desk = new ApprovalDesk(userTurn);
  const { privateJwk } = await generateEd25519Jwk();
  const gate = new Gate({
    store: await openSqliteStore(join(dataDir, 'gate.sqlite')),
    policy: loadPolicy(EXAMPLE_POLICY_FILE),
    sinkId: 'example-host-dispatch',
    signingKey: { privateJwk, kid: 'example-gate-key' },
    approve: desk.approve,
  });
  return {
    gate,
    desk,
    context: (model, runtime) => ({
      gate,
      session_id: `example-${runtime}`,
      principal: { principal_id: 'example-workspace', principal_type: 'workspace' },
      agent: { agent_id: 'example-seat-1', runtime_id: runtime, model_id: model, delegation_depth: 0 },
      purpose: { purpose_id: 'user-turn', declared_purpose: 'pay and report an open invoice' },
      provenanceOf: provenanceFor(userTurn),
    }),
  };
}
