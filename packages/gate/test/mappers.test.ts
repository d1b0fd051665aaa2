import {
  type ActContext,
  candidateActId,
  computerUseLiveArgs,
  digestArguments,
  GateError,
  mapComputerUseAction,
  mapMcpToolsCall,
  mapResponsesFunctionCall,
  mapToolCall,
  mapToolUse,
  parseIJson,
  validateAct,
} from '@vrpkit/gate';
import { describe, expect, it } from 'vitest';

const CLASSES: Record<string, 'INFORMATIONAL' | 'COMMUNICATION' | 'FINANCIAL' | 'PERSISTENT_STATE_CHANGE'> = {
  search: 'INFORMATIONAL',
  email_send: 'COMMUNICATION',
  payout_create: 'FINANCIAL',
  repo_deploy: 'PERSISTENT_STATE_CHANGE',
};

function ctx(over: Partial<ActContext> = {}): ActContext {
  return {
    session_id: 'sess55',
    principal: { principal_id: 'org-acme', principal_type: 'workspace' },
    agent: { agent_id: 'seat-12', runtime_id: 'host-loop', model_id: 'claude-family', delegation_depth: 0 },
    purpose: { purpose_id: 'user-turn' },
    policy_state: { policy_epoch: 9, authority_epoch: 3, revocation_epoch: 1 },
    sink_id: 'host-dispatch-1',
    classify: (t) =>
      t.tool_protocol === 'BROWSER' ? (t.function_id === 'screenshot' ? 'INFORMATIONAL' : 'FINANCIAL') : (CLASSES[t.tool_id] ?? 'OTHER'),
    now: Date.parse('2026-11-29T12:00:00Z'),
    nonce: () => 'C0FFEE11DEADBEEF',
    ...over,
  };
}

function gateCode(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    if (e instanceof GateError) return e.code;
    throw e;
  }
  return undefined;
}

describe('mapToolUse (Anthropic tool_use)', () => {
  const block = {
    type: 'tool_use' as const,
    id: 'toolu_01A',
    name: 'email_send',
    input: { to: 'alice@example.com', subject: 'Invoice', body: '...' },
  };

  it("maps exactly as the seed's Anthropic mapping section says", () => {
    const act = mapToolUse(
      block,
      ctx({ tools: { email_send: { tool_protocol: 'LOCAL_FUNCTION', destination: { destination_id: 'smtp-gw-1' } } } }),
    );
    expect(validateAct(act)).toEqual({ ok: true, act });
    expect(act).toMatchObject({
      act_type: 'TOOL_CALL',
      candidate_act_id: 'act:anthropic:sess55:toolu_01A',
      tool: { tool_id: 'email_send', function_id: 'email_send', tool_protocol: 'LOCAL_FUNCTION' },
      arguments_digest: digestArguments(block.input),
      consequence_class: 'COMMUNICATION',
      destination: { destination_id: 'smtp-gw-1' },
      freshness: { session_id: 'sess55', nonce: 'C0FFEE11DEADBEEF' },
      initiating_principal: { principal_id: 'org-acme' },
      agent: { model_id: 'claude-family' },
      policy_state: { policy_epoch: 9, authority_epoch: 3, revocation_epoch: 1 },
      finality_sink: { sink_id: 'host-dispatch-1', sink_type: 'TOOL_DISPATCH' },
      created_at: '2026-11-29T12:00:00.000Z',
      expires_at: '2026-11-29T12:10:00.000Z',
    });
  });

  it('defaults the protocol to ANTHROPIC_TOOL_USE and carries instruction provenance', () => {
    const act = mapToolUse(block, ctx({ instruction_provenance: { source_type: 'retrieval' } }));
    expect(act.tool.tool_protocol).toBe('ANTHROPIC_TOOL_USE');
    expect(act.instruction_provenance).toEqual({ source_type: 'retrieval' });
  });

  it('the act id is unambiguous across sessions and vendors', () => {
    expect(candidateActId('anthropic', 'a:b', 'c')).not.toBe(candidateActId('anthropic', 'a', 'b:c'));
    expect(candidateActId('anthropic', 's', 'x')).not.toBe(candidateActId('openai', 's', 'x'));
  });

  it('refuses non-I-JSON input and blocks without id or name', () => {
    expect(gateCode(() => mapToolUse({ ...block, input: { n: 2 ** 60 } }, ctx()))).toBe('EF_MALFORMED_ARGUMENTS');
    expect(gateCode(() => mapToolUse({ ...block, id: '' }, ctx()))).toBe('EF_MALFORMED_ACT');
  });

  it('maps computer tools to COMPUTER_USE at the BROWSER_CONTROLLER sink, and refuses them without live state', () => {
    const click = { type: 'tool_use' as const, id: 'toolu_c1', name: 'computer', input: { action: 'left_click', coordinate: [10, 20] } };
    expect(gateCode(() => mapToolUse(click, ctx()))).toBe('EF_LIVE_STATE_UNREADABLE');
    const act = mapToolUse(click, ctx(), { url: 'https://pay.example/checkout' });
    expect(act).toMatchObject({
      act_type: 'COMPUTER_USE',
      tool: { tool_id: 'computer', function_id: 'left_click', tool_protocol: 'BROWSER', tool_endpoint: 'https://pay.example' },
      finality_sink: { sink_type: 'BROWSER_CONTROLLER' },
      destination: { destination_id: 'https://pay.example', destination_url: 'https://pay.example/checkout' },
      consequence_class: 'FINANCIAL',
    });
    expect(mapToolUse({ ...click, name: 'computer_20250124' }, ctx(), { url: 'https://pay.example/' }).act_type).toBe('COMPUTER_USE');
    expect(
      mapToolUse(
        { ...click, name: 'browser', input: { action: 'screenshot' } },
        ctx({ tools: { browser: { act_type: 'COMPUTER_USE' } } }),
        { url: 'https://a.example/' },
      ).consequence_class,
    ).toBe('INFORMATIONAL');
  });
});

describe('mapComputerUseAction', () => {
  const submit = { id: 'toolu_s1', name: 'computer', input: { action: 'key', text: 'Return' } };
  const live = {
    url: 'https://pay.example/checkout',
    form: { action_url: 'https://pay.example/pay', fields: { amount: '150.00', iban: 'DE02120300000000202051' } },
  };

  it('binds the digest over the live origin, destination URL and form values, not the narration', () => {
    const act = mapComputerUseAction(submit, live, ctx());
    expect(act.arguments_digest).toEqual(
      digestArguments({ action: 'key', input: submit.input, origin: 'https://pay.example', url: live.url, form: live.form }),
    );
    expect(act.destination).toEqual({ destination_id: 'https://pay.example', destination_url: 'https://pay.example/pay' });
    // A changed field value or a changed origin is a different digest.
    const changedField = computerUseLiveArgs(submit.input, {
      ...live,
      form: { ...live.form, fields: { ...live.form.fields, iban: 'GB33BUKB20201555555555' } },
    });
    expect(digestArguments(changedField).value).not.toBe(act.arguments_digest.value);
    const changedOrigin = computerUseLiveArgs(submit.input, { ...live, url: 'https://pay.example-evil/checkout' });
    expect(changedOrigin.origin).toBe('https://pay.example-evil');
    expect(digestArguments(changedOrigin).value).not.toBe(act.arguments_digest.value);
  });

  it('refuses to act when the live fields cannot be read', () => {
    expect(gateCode(() => mapComputerUseAction(submit, { url: live.url, form: 'unreadable' }, ctx()))).toBe('EF_LIVE_STATE_UNREADABLE');
    expect(gateCode(() => mapComputerUseAction(submit, { url: 'not a url' }, ctx()))).toBe('EF_LIVE_STATE_UNREADABLE');
    expect(gateCode(() => mapComputerUseAction(submit, { url: 'data:text/html,x' }, ctx()))).toBe('EF_LIVE_STATE_UNREADABLE');
    expect(gateCode(() => mapComputerUseAction({ ...submit, input: { text: 'x' } }, live, ctx()))).toBe('EF_MALFORMED_ACT');
  });

  it('each action is its own act', () => {
    const a = mapComputerUseAction({ ...submit, id: 'toolu_1' }, live, ctx());
    const b = mapComputerUseAction({ ...submit, id: 'toolu_2' }, live, ctx());
    expect(a.candidate_act_id).not.toBe(b.candidate_act_id);
  });
});

describe('mapToolCall / mapResponsesFunctionCall (OpenAI)', () => {
  const call = {
    id: 'call_8f3',
    type: 'function' as const,
    function: { name: 'payout_create', arguments: '{"amount":"150.00","currency":"EUR","beneficiary":"vendor-441"}' },
  };

  it("maps exactly as the seed's OpenAI mapping section says", () => {
    const args = parseIJson(call.function.arguments);
    const act = mapToolCall(
      call,
      args,
      ctx({ tools: { payout_create: { tool_protocol: 'HTTP_API', destination: { destination_id: 'psp.example' } } } }),
    );
    expect(validateAct(act).ok).toBe(true);
    expect(act).toMatchObject({
      act_type: 'TOOL_CALL',
      candidate_act_id: 'act:openai:sess55:call_8f3',
      tool: { tool_id: 'payout_create', function_id: 'payout_create', tool_protocol: 'HTTP_API' },
      consequence_class: 'FINANCIAL',
      destination: { destination_id: 'psp.example' },
      finality_sink: { sink_id: 'host-dispatch-1', sink_type: 'TOOL_DISPATCH' },
    });
  });

  it('two equivalent argument strings give one digest', () => {
    const a = mapToolCall(call, parseIJson(call.function.arguments), ctx());
    const b = mapToolCall(call, parseIJson('{ "beneficiary" : "vendor-441", "currency":"\\u0045UR", "amount":"150.00" }'), ctx());
    expect(b.arguments_digest).toEqual(a.arguments_digest);
  });

  it('a duplicate key in the arguments string is malformed, not last-wins', () => {
    expect(gateCode(() => parseIJson('{"amount":"1.00","amount":"9000.00"}'))).toBe('EF_MALFORMED_ARGUMENTS');
  });

  it('parallel calls are separate acts keyed by call id, not by index', () => {
    const acts = [call, { ...call, id: 'call_9a1', function: { name: 'search', arguments: '{"q":"x"}' } }].map((c) =>
      mapToolCall(c, parseIJson(c.function.arguments), ctx()),
    );
    expect(new Set(acts.map((a) => a.candidate_act_id)).size).toBe(2);
    expect(acts.map((a) => a.consequence_class)).toEqual(['FINANCIAL', 'INFORMATIONAL']);
  });

  it('a GPT Action maps to API_REQUEST with the Action server as destination and operationId as function_id', () => {
    const act = mapToolCall(
      { ...call, function: { name: 'action_generic', arguments: '{}' } },
      {},
      ctx({
        tools: {
          action_generic: {
            act_type: 'API_REQUEST',
            function_id: 'createPayout',
            tool_protocol: 'HTTP_API',
            destination: { destination_id: 'https://api.customer.example' },
          },
        },
      }),
    );
    expect(act).toMatchObject({
      act_type: 'API_REQUEST',
      tool: { tool_id: 'action_generic', function_id: 'createPayout' },
      destination: { destination_id: 'https://api.customer.example' },
    });
  });

  it('Responses function_call items use the same map and must be completed', () => {
    const item = {
      type: 'function_call' as const,
      call_id: 'call_8f3',
      name: 'payout_create',
      arguments: call.function.arguments,
      status: 'completed' as const,
    };
    const act = mapResponsesFunctionCall(item, parseIJson(item.arguments), ctx());
    expect(act.candidate_act_id).toBe('act:responses:sess55:call_8f3');
    expect(act.arguments_digest).toEqual(mapToolCall(call, parseIJson(call.function.arguments), ctx()).arguments_digest);
    expect(gateCode(() => mapResponsesFunctionCall({ ...item, status: 'in_progress' }, {}, ctx()))).toBe('EF_MALFORMED_ACT');
  });
});

describe('mapMcpToolsCall', () => {
  const req = {
    jsonrpc: '2.0',
    id: 'rpc-77',
    method: 'tools/call',
    params: { name: 'repo_deploy', arguments: { env: 'prod', ref: 'main' } },
  };

  it('binds the server identity into tool_endpoint AND destination, protocol MCP', () => {
    const act = mapMcpToolsCall(req.params, { serverUrl: 'mcp://git.example/prod' }, ctx(), 'toolu_dep1');
    expect(validateAct(act).ok).toBe(true);
    expect(act).toMatchObject({
      act_type: 'TOOL_CALL',
      tool: { tool_id: 'repo_deploy', function_id: 'repo_deploy', tool_protocol: 'MCP', tool_endpoint: 'mcp://git.example/prod' },
      destination: { destination_id: 'mcp://git.example/prod' },
      arguments_digest: digestArguments({ env: 'prod', ref: 'main' }),
      consequence_class: 'PERSISTENT_STATE_CHANGE',
    });
  });

  it('the JSON-RPC id is never the act id: the same id on two servers gives two acts', () => {
    const a = mapMcpToolsCall(req.params, { serverUrl: 'mcp://git.example/prod' }, ctx());
    const b = mapMcpToolsCall(req.params, { serverUrl: 'mcp://git.attacker/prod' }, ctx());
    expect(a.candidate_act_id).not.toBe(b.candidate_act_id);
    expect(a.candidate_act_id).not.toContain(req.id);
    expect(b.destination?.destination_id).toBe('mcp://git.attacker/prod');
  });

  it('absent arguments are the empty object', () => {
    expect(mapMcpToolsCall({ name: 'ping' }, { serverUrl: 'mcp://x' }, ctx()).arguments_digest).toEqual(digestArguments({}));
  });
});
