import { VrpError } from '@vrpkit/core';
import {
  anthropicDenyResult,
  EF_CODES,
  GATE_PROFILE,
  GateError,
  hostErrorObject,
  isEfCode,
  mcpDenyResult,
  openAIDenyMessage,
  responsesDenyOutput,
} from '@vrpkit/gate';
import { describe, expect, it } from 'vitest';

describe('the EF code registry', () => {
  it("carries the seed's spellings, EF-060 with its hyphen", () => {
    for (const code of [
      'EF_002',
      'EF_005',
      'EF_040',
      'EF-060',
      'EF_SCOPE_MISMATCH',
      'EF_DESTINATION_MISMATCH',
      'EF_INSTRUCTION_PROVENANCE_FAILURE',
    ])
      expect(isEfCode(code)).toBe(true);
    expect(isEfCode('EF_060')).toBe(false);
    expect(isEfCode('EF-002')).toBe(false);
  });

  it('every entry has a symbolic name and a fixed message; only the validation timeout is retryable', () => {
    const names = Object.values(EF_CODES).map((e) => e.name);
    expect(new Set(names).size).toBe(names.length);
    expect(
      Object.entries(EF_CODES)
        .filter(([, e]) => e.retryable)
        .map(([c]) => c),
    ).toEqual(['EF-060']);
    expect(EF_CODES['EF-060'].name).toBe('VALIDATION_TIMEOUT');
  });

  it('GateError is a VrpError with a registry code and the profile id in its details', () => {
    const e = new GateError('EF_040');
    expect(e).toBeInstanceOf(VrpError);
    expect(e.toJSON()).toEqual({ code: 'EF_040', message: EF_CODES.EF_040.message, details: { profile: GATE_PROFILE } });
    expect(GATE_PROFILE).toBe('tool-binding-02');
  });
});

describe("hostErrorObject (the seed's host error object)", () => {
  it("has exactly the seed's shape", () => {
    expect(hostErrorObject({ allow: false, code: 'EF_SCOPE_MISMATCH' })).toEqual({
      error: { code: 'EF_SCOPE_MISMATCH', message: 'Live arguments are not the authorized digest.', retryable: false, invoked: false },
    });
  });

  it('never carries the decision message (it could hold data the model must not see)', () => {
    const body = hostErrorObject({ allow: false, code: 'EF_002', message: 'no authority for bob@other-tenant.example' });
    expect(JSON.stringify(body)).not.toContain('bob@other-tenant.example');
    expect(body.error.message).toBe(EF_CODES.EF_002.message);
  });

  it('retryable only for EF-060 and only when enforce said so', () => {
    expect(hostErrorObject({ allow: false, code: 'EF-060', retryable: true }).error.retryable).toBe(true);
    expect(hostErrorObject({ allow: false, code: 'EF-060' }).error.retryable).toBe(false);
    expect(hostErrorObject({ allow: false, code: 'EF_005', retryable: true }).error.retryable).toBe(false);
  });

  it('an unknown or missing code fails closed', () => {
    expect(hostErrorObject({ allow: false, code: 'SOMETHING_ELSE' }).error.code).toBe('EF_FAIL_CLOSED');
    expect(hostErrorObject({ allow: false }).error.code).toBe('EF_FAIL_CLOSED');
  });
});

describe('the host error object in each vendor shape', () => {
  const d = { allow: false, code: 'EF_040' } as const;
  const body = JSON.stringify(hostErrorObject(d));

  it('Anthropic: tool_result with is_error: true for the tool_use id', () => {
    expect(anthropicDenyResult('toolu_01A', d)).toEqual({ type: 'tool_result', tool_use_id: 'toolu_01A', is_error: true, content: body });
  });
  it('OpenAI Chat: a tool message for the call id', () => {
    expect(openAIDenyMessage('call_8f3', d)).toEqual({ role: 'tool', tool_call_id: 'call_8f3', content: body });
  });
  it('OpenAI Responses: a function_call_output for the call id', () => {
    expect(responsesDenyOutput('call_8f3', d)).toEqual({ type: 'function_call_output', call_id: 'call_8f3', output: body });
  });
  it('MCP: an error result the model sees', () => {
    expect(mcpDenyResult(d)).toEqual({ isError: true, content: [{ type: 'text', text: body }], structuredContent: hostErrorObject(d) });
  });
});
