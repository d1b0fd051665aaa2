/**
 * Value limits in policy (Tool-Use Binding draft, T-B: "two OpenAI tool_calls, search and payout;
 * expect payout denied when above envelope"): amount caps per currency, argument allow-lists and
 * destination allow-lists, checked at authorize (no person is asked about an act above them) and
 * again at enforce (an approval never carries an act past them). Real Gate, real SQLite file.
 */
import { handleOpenAIMessage, loadPolicy, type PolicyDocument, PolicyError } from '@vrpkit/gate';
import { afterEach, describe, expect, it } from 'vitest';
import { countingTools, hostContext, openTestGate, TEST_POLICY, type TestGate } from './scenarios-gate.js';

const LIMITED: PolicyDocument = {
  ...TEST_POLICY,
  policy_id: 'value-limits-v1',
  limits: [
    {
      tool: 'payout_create',
      amounts: [{ amount: 'amount', currency: 'currency', max: { EUR: 100, USD: 120 } }],
      arguments: [{ argument: 'beneficiary', values: ['vendor-*'] }],
    },
  ],
};

/** A person who approves everything and notes which tools they were asked about. */
function recordingApprover(asked: string[]) {
  return async (a: { tool: { tool_id: string } }): Promise<boolean> => {
    asked.push(a.tool.tool_id);
    return true;
  };
}

let t: TestGate | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

function payoutCall(id: string, args: Record<string, unknown>) {
  return { id, type: 'function' as const, function: { name: 'payout_create', arguments: JSON.stringify(args) } };
}
const search = { id: 'call_s', type: 'function' as const, function: { name: 'search', arguments: '{"query":"vendor-441 invoices"}' } };

describe('T-B as the draft states it: payout denied when above the envelope, run when within it', () => {
  it('above the cap: denied EF_ENVELOPE_EXCEEDED without asking anyone; the search still runs', async () => {
    const asked: string[] = [];
    t = await openTestGate({ policy: LIMITED, approve: recordingApprover(asked) });
    const { tools, calls } = countingTools();
    // The draft's own payout arguments: 150.00 EUR is above the 100 EUR envelope.
    const { outcomes, messages } = await handleOpenAIMessage(
      { tool_calls: [search, payoutCall('call_p', { amount: '150.00', currency: 'EUR', beneficiary: 'vendor-441' })] },
      tools,
      hostContext(t.gate),
    );
    expect(outcomes.map((o) => [o.name, o.invoked, o.decision.code])).toEqual([
      ['search', true, undefined],
      ['payout_create', false, 'EF_ENVELOPE_EXCEEDED'],
    ]);
    expect(JSON.parse(messages[1]!.content).error).toMatchObject({ code: 'EF_ENVELOPE_EXCEEDED', invoked: false });
    expect(calls.map((c) => c.name)).toEqual(['search']);
    expect(asked).toEqual([]);
  });

  it('within the cap: FINANCIAL still goes to a person, and once approved runs exactly once', async () => {
    const asked: string[] = [];
    t = await openTestGate({ policy: LIMITED, approve: recordingApprover(asked) });
    const { tools, calls } = countingTools();
    const { outcomes } = await handleOpenAIMessage(
      { tool_calls: [payoutCall('call_p', { amount: '100.00', currency: 'EUR', beneficiary: 'vendor-441' })] },
      tools,
      hostContext(t.gate),
    );
    expect(outcomes[0]).toMatchObject({ invoked: true, decision: { allow: true } });
    expect(asked).toEqual(['payout_create']);
    expect(calls).toEqual([{ name: 'payout_create', args: { amount: '100.00', currency: 'EUR', beneficiary: 'vendor-441' } }]);
  });

  it.each([
    ['a currency the envelope does not name', { amount: 1, currency: 'GBP', beneficiary: 'vendor-441' }, 'EF_ENVELOPE_EXCEEDED'],
    ['a per-currency cap (USD 121 > 120)', { amount: 121, currency: 'USD', beneficiary: 'vendor-441' }, 'EF_ENVELOPE_EXCEEDED'],
    ['a beneficiary outside the allow-list', { amount: 5, currency: 'EUR', beneficiary: 'attacker-1' }, 'EF_ENVELOPE_EXCEEDED'],
    ['a missing amount', { currency: 'EUR', beneficiary: 'vendor-441' }, 'EF_ENVELOPE_EXCEEDED'],
    ['an amount in exponent notation', { amount: '1e2', currency: 'EUR', beneficiary: 'vendor-441' }, 'EF_ENVELOPE_EXCEEDED'],
    ['a negative amount', { amount: -5, currency: 'EUR', beneficiary: 'vendor-441' }, 'EF_ENVELOPE_EXCEEDED'],
  ])('denies %s', async (_name, args, code) => {
    t = await openTestGate({ policy: LIMITED, approve: async () => true });
    const { tools, calls } = countingTools();
    const { outcomes } = await handleOpenAIMessage({ tool_calls: [payoutCall('call_x', args)] }, tools, hostContext(t.gate));
    expect(outcomes[0]).toMatchObject({ invoked: false, decision: { allow: false, code } });
    expect(calls).toEqual([]);
  });

  it('enforce checks the limits too: authority approved for an over-limit act is never spent', async () => {
    t = await openTestGate({ policy: LIMITED });
    const { gate } = t;
    const policy_state = await gate.policyState();
    const args = { amount: '999.00', currency: 'EUR', beneficiary: 'vendor-441' };
    const { mapToolCall, parseIJson, digestArguments } = await import('@vrpkit/gate');
    const act = mapToolCall(payoutCall('call_z', args), parseIJson(JSON.stringify(args)), {
      session_id: 's',
      principal: { principal_id: 'org' },
      agent: { agent_id: 'a' },
      purpose: { purpose_id: 'p' },
      instruction_provenance: { source_type: 'user' },
      policy_state,
      sink_id: gate.sinkId,
      classify: (tool) => gate.classify(tool),
      now: Date.now(),
    });
    expect(act.arguments_digest).toEqual(digestArguments(args));
    // authorize alone has no arguments: it escalates, and a person approves the digest.
    expect(await gate.authorize(act)).toMatchObject({ status: 'escalated' });
    expect(await gate.approve(act.candidate_act_id, 'alice')).toMatchObject({ status: 'issued' });
    expect(await gate.enforce(act, args)).toMatchObject({ allow: false, code: 'EF_ENVELOPE_EXCEEDED' });
  });

  it('destination allow-lists deny another destination with EF_DESTINATION_MISMATCH', async () => {
    const policy = loadPolicy({ ...TEST_POLICY, limits: [{ tool: 'repo_deploy', destinations: ['mcp://git.example/*'] }] });
    const base = { tool: { tool_id: 'repo_deploy', function_id: 'repo_deploy' } } as const;
    expect(policy.checkArguments({ ...base, destination: { destination_id: 'mcp://git.attacker/prod' } } as never, {})).toMatchObject({
      code: 'EF_DESTINATION_MISMATCH',
    });
    expect(policy.checkArguments({ ...base, destination: { destination_id: 'mcp://git.example/prod' } } as never, {})).toBeNull();
    expect(policy.checkArguments({ ...base } as never, {})).toMatchObject({ code: 'EF_DESTINATION_MISMATCH' });
  });

  it('a limit without a currency argument must name *; a malformed cap is a policy error', () => {
    expect(() => loadPolicy({ ...TEST_POLICY, limits: [{ tool: 'x', amounts: [{ amount: 'a', max: { EUR: 1 } }] }] })).toThrow(PolicyError);
    expect(() =>
      loadPolicy({ ...TEST_POLICY, limits: [{ tool: 'x', amounts: [{ amount: 'a', currency: 'c', max: { EUR: -1 } }] }] }),
    ).toThrow(PolicyError);
  });
});

describe('issue 36 defect 18: a currency that is not three ASCII letters is refused, never capped by the wildcard', () => {
  const WILDCARD: PolicyDocument = {
    ...LIMITED,
    policy_id: 'value-limits-wildcard',
    limits: [{ tool: 'payout_create', amounts: [{ amount: 'amount', currency: 'currency', max: { EUR: 100, '*': 1_000_000 } }] }],
  };
  it.each([['EUR '], ['\uff25\uff35\uff32'], ['eur\u0000'], ['EURO'], ['']])(
    'refuses currency %j (EUR is capped at 100)',
    async (currency) => {
      t = await openTestGate({ policy: WILDCARD, approve: async () => true });
      const { tools, calls } = countingTools();
      const { outcomes } = await handleOpenAIMessage(
        { tool_calls: [payoutCall('call_c', { amount: '5000.00', currency, beneficiary: 'vendor-441' })] },
        tools,
        hostContext(t.gate),
      );
      expect(outcomes[0]).toMatchObject({ invoked: false, decision: { allow: false, code: 'EF_ENVELOPE_EXCEEDED' } });
      expect(calls).toEqual([]);
    },
  );
});
