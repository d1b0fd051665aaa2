/**
 * The rules a signed-in approver's decision is checked against (approvers/identity.ts): the role
 * from a listed subject or an ID-token claim, the `<method>:<subject>` the audit records, and
 * self-approval from the policy in force — `approval.self_approval` (default false, a policy
 * without it keeping its digest), and with a policy set the act principal's member, failing closed
 * where a group member could be theirs (the page does not know the token's groups).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { approverActor, holdsApproverRole, loadPolicy, PolicyError, parseApproverClaim, selfApprovalRule } from '@vrpkit/gate';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPolicySet } from '../src/auth/policy-set.js';
import { makeAct, removeTmpDirs, tmpDir } from './procs/common.js';

const EPOCHS = { policy_epoch: 1, authority_epoch: 1, revocation_epoch: 1 };
const dir = tmpDir('approvers-rules');
afterAll(removeTmpDirs);

/** An act of `subject`'s agent `client`. */
function actOf(subject: string, client = 'agent-1') {
  const act = makeAct({ id: `a-${subject}-${client}`, tool: 'payout_create', consequence_class: 'FINANCIAL', policy_state: EPOCHS });
  act.initiating_principal = { principal_id: subject };
  act.agent = { ...act.agent, agent_id: client };
  return act;
}

describe('the approver role and the recorded actor', () => {
  const role = { subjects: ['alice'], claim: parseApproverClaim('groups=approvers') };

  it('holds for a listed subject, or for the claim as a string equal to the value or an array holding it', () => {
    expect(holdsApproverRole(role, 'alice')).toBe(true);
    expect(holdsApproverRole(role, 'carol', { groups: ['staff', 'approvers'] })).toBe(true);
    expect(holdsApproverRole(role, 'carol', { groups: 'approvers' })).toBe(true);
    expect(holdsApproverRole(role, 'bob', { groups: ['staff'] })).toBe(false);
    expect(holdsApproverRole(role, 'bob', { groups: { approvers: true } })).toBe(false);
    expect(holdsApproverRole(role, 'bob', { other: 'approvers' })).toBe(false);
    expect(holdsApproverRole({ subjects: [] }, 'alice', { groups: ['approvers'] })).toBe(false);
  });

  it('parses NAME=VALUE only', () => {
    expect(parseApproverClaim(' roles = gate-approver ')).toEqual({ name: 'roles', value: 'gate-approver' });
    for (const bad of ['groups', '=approvers', 'groups=', '']) expect(() => parseApproverClaim(bad)).toThrow(RangeError);
  });

  it('records method and subject', () => {
    expect(approverActor({ method: 'passkey', subject: 'dave' })).toBe('passkey:dave');
    expect(approverActor({ method: 'oidc', subject: '248289761001' })).toBe('oidc:248289761001');
  });
});

describe('self-approval from the policy', () => {
  const base = { version: 1 as const, policy_id: 'p' };

  it('is false unless the policy says approval.self_approval: true; a policy without it keeps its digest', () => {
    expect(loadPolicy(base).selfApproval).toBe(false);
    expect(loadPolicy({ ...base, approval: {} }).selfApproval).toBe(false);
    expect(loadPolicy({ ...base, approval: { self_approval: false } }).selfApproval).toBe(false);
    expect(loadPolicy({ ...base, approval: { self_approval: true } }).selfApproval).toBe(true);
    // No default is written into the normalized document (its digest is the policy epoch's input).
    expect('approval' in loadPolicy(base).document).toBe(false);
    expect(loadPolicy({ ...base, approval: { self_approval: true } }).digest).not.toBe(loadPolicy(base).digest);
    expect(() => loadPolicy({ ...base, approval: { self_approval: 'yes' } } as never)).toThrow(PolicyError);
    expect(() => loadPolicy({ ...base, approval: { others: true } } as never)).toThrow(PolicyError);
    expect(selfApprovalRule(undefined)(actOf('alice'))).toBe(false);
    expect(selfApprovalRule(loadPolicy({ ...base, approval: { self_approval: true } }))(actOf('alice'))).toBe(true);
  });

  it("with a policy set: the principal's member decides; a group member that could be theirs and forbids it wins (fail closed)", () => {
    const write = (name: string, lines: string[]) => writeFileSync(join(dir, name), lines.join('\n'));
    write('lenient.yaml', ['version: 1', 'policy_id: lenient', 'approval: { self_approval: true }']);
    write('strict.yaml', ['version: 1', 'policy_id: strict']);
    write('set.yaml', [
      'version: 1',
      'policy_set_id: team',
      'default: lenient.yaml',
      'members:',
      '  - { name: leads, when: { subject: lead }, policy: lenient.yaml }',
      '  - { name: contractors, when: { group: contractors }, policy: strict.yaml }',
      '  - { name: bots, when: { client: ci-bot }, policy: strict.yaml }',
    ]);
    const rule = selfApprovalRule(undefined, loadPolicySet(join(dir, 'set.yaml')));
    // lead matches by subject before the group member: only the lenient member can be theirs.
    expect(rule(actOf('lead'))).toBe(true);
    // Anyone else could be a contractor (groups unknown to the page): forbidden.
    expect(rule(actOf('alice'))).toBe(false);
    // Without group members in the way, the default member (lenient) decides; the client's member (strict) wins for ci-bot.
    write('set2.yaml', [
      'version: 1',
      'policy_set_id: team2',
      'default: lenient.yaml',
      'members:',
      '  - { name: bots, when: { client: ci-bot }, policy: strict.yaml }',
    ]);
    const rule2 = selfApprovalRule(undefined, loadPolicySet(join(dir, 'set2.yaml')));
    expect(rule2(actOf('alice'))).toBe(true);
    expect(rule2(actOf('alice', 'ci-bot'))).toBe(false);
  });
});
