/** Policy: JSON/YAML/object loading with clear errors, classification before the model names a tool, decisions. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadPolicy, type PolicyDocument, PolicyError } from '@vrpkit/gate';
import { afterAll, describe, expect, it } from 'vitest';
import { makeAct, removeTmpDirs, TEST_POLICY, tmpDir } from './procs/common.js';

const EPOCHS = { policy_epoch: 1, authority_epoch: 1, revocation_epoch: 1 };
const dir = tmpDir('policy');

function errorOf(input: string | PolicyDocument): PolicyError {
  try {
    loadPolicy(input);
  } catch (e) {
    if (e instanceof PolicyError) return e;
    throw e;
  }
  throw new Error('expected a PolicyError');
}

describe('loadPolicy', () => {
  it('reads the same policy from YAML, from JSON and as a typed object (same digest)', () => {
    const yaml = join(dir, 'p.yaml');
    writeFileSync(
      yaml,
      [
        'version: 1',
        'policy_id: gate-tests',
        'tools:',
        '  - { tool: search, consequence_class: INFORMATIONAL }',
        '  - { tool: side_effect, consequence_class: PERSISTENT_STATE_CHANGE }',
        'hot_envelopes:',
        '  - name: reads',
        '    consequence_classes: [INFORMATIONAL]',
        '    authority_ttl_seconds: 60',
        '  - name: crash-test-writes',
        '    consequence_classes: [PERSISTENT_STATE_CHANGE]',
        '    tools: [side_effect]',
        '',
      ].join('\n'),
    );
    const json = join(dir, 'p.json');
    writeFileSync(json, JSON.stringify(TEST_POLICY));
    const fromObject = loadPolicy(TEST_POLICY);
    expect(loadPolicy(yaml).digest).toBe(fromObject.digest);
    expect(loadPolicy(json).digest).toBe(fromObject.digest);
    expect(fromObject.policyId).toBe('gate-tests');
    expect(fromObject.approvalTtlMs).toBe(60_000);
  });

  it('lists every problem by path', () => {
    const e = errorOf({
      version: 1,
      policy_id: '',
      tools: [{ tool: 'x', consequence_class: 'HARMLESS' as never }],
      hot_envelopes: [{ name: 'pay', consequence_classes: ['FINANCIAL'] }],
    });
    expect(e.code).toBe('invalid_policy');
    const issues = ((e.details?.issues ?? []) as string[]).join('\n');
    expect(issues).toMatch(/^policy_id: /m);
    expect(issues).toMatch(/^tools\.0\.consequence_class: /m);
    expect(issues).toContain('hot_envelopes.0.consequence_classes: FINANCIAL is fail-closed');
  });

  it('rejects unknown fields, duplicate YAML keys, unreadable and unparsable files', () => {
    expect(errorOf({ ...TEST_POLICY, hot_envelope: [] } as unknown as PolicyDocument).message).toMatch(/hot_envelope/);
    const dup = join(dir, 'dup.yaml');
    writeFileSync(dup, 'version: 1\npolicy_id: a\npolicy_id: b\n');
    expect(errorOf(dup).message).toMatch(/not valid JSON or YAML/);
    expect(errorOf(join(dir, 'missing.yaml')).message).toMatch(/cannot read policy file/);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"version": 1,');
    expect(errorOf(bad).message).toMatch(/not valid JSON or YAML/);
  });
});

describe('classify: consequence class assigned before the model names the tool', () => {
  const p = loadPolicy({ version: 1, policy_id: 'defaults' });
  it.each([
    ['payout_create', 'FINANCIAL'],
    ['payment_refund', 'FINANCIAL'],
    ['email_send', 'COMMUNICATION'],
    ['slack_post_message', 'COMMUNICATION'],
    ['search', 'INFORMATIONAL'],
    ['maps_search', 'INFORMATIONAL'],
    ['get_weather', 'INFORMATIONAL'],
    ['repo_deploy', 'PERSISTENT_STATE_CHANGE'],
    ['file_write', 'PERSISTENT_STATE_CHANGE'],
    ['memory_write', 'PERSISTENT_STATE_CHANGE'],
    ['export_contacts', 'DATA_DISCLOSURE'],
    ['firewall_open_port', 'NETWORK_CONTROL'],
    ['door_unlock', 'PHYSICAL'],
    ['frobnicate', 'OTHER'],
  ] as const)('%s → %s', (tool, cls) => {
    expect(p.classify({ tool_id: tool })).toBe(cls);
  });

  it('tells computer-use actions apart by action and origin', () => {
    expect(p.classify({ tool_id: 'computer', function_id: 'screenshot' })).toBe('DATA_DISCLOSURE');
    expect(p.classify({ tool_id: 'computer_20251124', function_id: 'mouse_move' })).toBe('INFORMATIONAL');
    expect(p.classify({ tool_id: 'computer', function_id: 'left_click', tool_endpoint: 'https://mail.example' })).toBe('COMMUNICATION');
    expect(p.classify({ tool_id: 'computer', function_id: 'type', tool_endpoint: 'https://pay.example' })).toBe('FINANCIAL');
    expect(p.classify({ tool_id: 'computer', function_id: 'left_click', tool_endpoint: 'https://docs.example' })).toBe(
      'PERSISTENT_STATE_CHANGE',
    );
  });

  it('explicit rules come first (by endpoint too); defaults can be switched off', () => {
    const p2 = loadPolicy({
      version: 1,
      policy_id: 'explicit',
      informative_defaults: false,
      default_consequence_class: 'FINANCIAL',
      tools: [
        { tool: 'repo_*', endpoint: 'mcp://git.example/*', consequence_class: 'PERSISTENT_STATE_CHANGE' },
        { tool: 'lookup', consequence_class: 'INFORMATIONAL' },
      ],
    });
    expect(p2.classify({ tool_id: 'repo_deploy', tool_endpoint: 'mcp://git.example/prod' })).toBe('PERSISTENT_STATE_CHANGE');
    expect(p2.classify({ tool_id: 'repo_deploy', tool_endpoint: 'mcp://git.attacker/prod' })).toBe('FINANCIAL');
    expect(p2.classify({ tool_id: 'search' })).toBe('FINANCIAL');
    expect(p2.classify({ tool_id: 'LOOKUP' })).toBe('INFORMATIONAL');
  });
});

describe('evaluate', () => {
  const p = loadPolicy({
    ...TEST_POLICY,
    hot_envelopes: [
      {
        name: 'reads',
        consequence_classes: ['INFORMATIONAL'],
        destinations: ['maps.example', '*.search.example'],
        authority_ttl_seconds: 30,
      },
    ],
  });
  const act = (over: Parameters<typeof makeAct>[0] extends infer S ? Partial<S> : never) =>
    makeAct({ id: 'a', policy_state: EPOCHS, destination: 'maps.example', ...over });

  it('issues a low-consequence act inside a hot envelope, with the envelope TTL', () => {
    expect(p.evaluate(act({}))).toMatchObject({ decision: 'issue', envelope: 'reads', ttlMs: 30_000 });
    expect(p.evaluate(act({ destination: 'eu.search.example' }))).toMatchObject({ decision: 'issue' });
  });

  it('escalates what is outside every envelope (other destination, FINANCIAL)', () => {
    expect(p.evaluate(act({ destination: 'maps.attacker' }))).toMatchObject({ decision: 'escalate', code: 'EF_APPROVAL_REQUIRED' });
    expect(p.evaluate(act({ tool: 'payout_create', consequence_class: 'FINANCIAL' }))).toMatchObject({ decision: 'escalate' });
  });

  it('T-A: retrieval (or unknown, or tool output) provenance + COMMUNICATION is denied; user provenance escalates', () => {
    for (const provenance of ['retrieval', 'unknown', 'tool_output'] as const)
      expect(p.evaluate(act({ tool: 'email_send', consequence_class: 'COMMUNICATION', provenance }))).toMatchObject({
        decision: 'deny',
        code: 'EF_INSTRUCTION_PROVENANCE_FAILURE',
      });
    expect(p.evaluate(act({ tool: 'email_send', consequence_class: 'COMMUNICATION', provenance: 'user' }))).toMatchObject({
      decision: 'escalate',
    });
  });

  it('unknown provenance + high consequence escalates, even where an envelope would issue', () => {
    const hot = loadPolicy({ ...TEST_POLICY, hot_envelopes: [{ name: 'w', consequence_classes: ['PERSISTENT_STATE_CHANGE'] }] });
    expect(hot.evaluate(act({ tool: 'file_write', provenance: 'user' }))).toMatchObject({ decision: 'issue' });
    expect(hot.evaluate(act({ tool: 'file_write', provenance: 'unknown' }))).toMatchObject({ decision: 'escalate' });
  });

  it('denies a misclassified act, deny_classes, and everything else when otherwise = deny', () => {
    expect(p.evaluate(act({ tool: 'payout_create', consequence_class: 'INFORMATIONAL' }))).toMatchObject({
      decision: 'deny',
      code: 'EF_SCOPE_MISMATCH',
    });
    const strict = loadPolicy({ ...TEST_POLICY, deny_classes: ['PHYSICAL'], otherwise: 'deny' });
    expect(strict.evaluate(act({ tool: 'door_unlock', consequence_class: 'PHYSICAL' }))).toMatchObject({
      decision: 'deny',
      code: 'EF_NOT_AUTHORIZED',
    });
    expect(strict.evaluate(act({ tool: 'payout_create', consequence_class: 'FINANCIAL' }))).toMatchObject({
      decision: 'deny',
      code: 'EF_NOT_AUTHORIZED',
    });
  });
});

afterAll(removeTmpDirs);
