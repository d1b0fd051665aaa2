/** Per-principal policy (issue 33 item 2): a policy set chooses each principal's member; `allowed_tools` limits listing and calling. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadPolicy, PolicyError } from '@vrpkit/gate';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPolicySet } from '../src/auth/policy-set.js';
import { makeAct, removeTmpDirs, tmpDir } from './procs/common.js';

const EPOCHS = { policy_epoch: 1, authority_epoch: 1, revocation_epoch: 1 };
/** An act for `delete_file` with the class every policy here assigns it (the informative defaults'). */
const deleteAct = () =>
  makeAct({
    id: 'act-1',
    tool: 'delete_file',
    policy_state: EPOCHS,
    consequence_class: loadPolicy({ version: 1, policy_id: 'c' }).classify({ tool_id: 'delete_file' }),
  });

const dir = tmpDir('policy-set');
afterAll(removeTmpDirs);

function write(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

write(
  'staff.yaml',
  ['version: 1', 'policy_id: staff', 'hot_envelopes:', '  - { name: reads, consequence_classes: [INFORMATIONAL] }'].join('\n'),
);
write(
  'contractors.yaml',
  [
    'version: 1',
    'policy_id: contractors',
    'allowed_tools: ["get_*", "search*"]',
    'hot_envelopes:',
    '  - { name: reads, consequence_classes: [INFORMATIONAL] }',
  ].join('\n'),
);
write('alice.yaml', ['version: 1', 'policy_id: alice', 'otherwise: deny'].join('\n'));
const setFile = write(
  'team.yaml',
  [
    'version: 1',
    'policy_set_id: team',
    'default: staff.yaml',
    'members:',
    '  - { name: alice, when: { subject: alice }, policy: alice.yaml }',
    '  - { name: contractors, when: { group: contractors }, policy: contractors.yaml }',
  ].join('\n'),
);

describe('policy set', () => {
  const set = loadPolicySet(setFile);

  it('chooses by subject first as written, then by group, else the default', () => {
    expect(set.select({ subject: 'alice', groups: ['contractors'] }).name).toBe('alice');
    expect(set.select({ subject: 'carol', groups: ['contractors'] }).name).toBe('contractors');
    expect(set.select({ subject: 'bob', groups: ['staff'] }).name).toBe('default');
    expect(set.members.map((m) => m.name)).toEqual(['default', 'alice', 'contractors']);
  });

  it('every member carries the set digest (the policy in force is the set; switching members never moves the epoch)', () => {
    expect(new Set(set.members.map((m) => m.policy.digest))).toEqual(new Set([set.digest]));
    write('staff-changed.yaml', ['version: 1', 'policy_id: staff', 'otherwise: deny'].join('\n'));
    const changed = write('team2.yaml', ['version: 1', 'policy_set_id: team', 'default: staff-changed.yaml'].join('\n'));
    expect(loadPolicySet(changed).digest).not.toBe(set.digest);
  });

  it('two principals get different decisions for the same act', () => {
    const act = deleteAct();
    expect(set.select({ subject: 'bob', groups: [] }).policy.evaluate(act)).toMatchObject({ decision: 'escalate' });
    expect(set.select({ subject: 'alice', groups: [] }).policy.evaluate(act)).toMatchObject({ decision: 'deny' });
  });

  it('refuses a set with an unnamed match, a duplicate member or a missing policy file, with every issue', () => {
    const bad = write(
      'bad.yaml',
      ['version: 1', 'policy_set_id: x', 'default: staff.yaml', 'members:', '  - { name: a, when: {}, policy: staff.yaml }'].join('\n'),
    );
    expect(() => loadPolicySet(bad)).toThrow(/members\.0\.when: name a subject, a client or a group/);
    const dup = write(
      'dup.yaml',
      [
        'version: 1',
        'policy_set_id: x',
        'default: staff.yaml',
        'members:',
        '  - { name: a, when: { subject: s }, policy: staff.yaml }',
        '  - { name: a, when: { group: g }, policy: staff.yaml }',
      ].join('\n'),
    );
    expect(() => loadPolicySet(dup)).toThrow(PolicyError);
    const missing = write('missing.yaml', ['version: 1', 'policy_set_id: x', 'default: nowhere.yaml'].join('\n'));
    expect(() => loadPolicySet(missing)).toThrow(/cannot read policy file/);
  });
});

describe('allowed_tools', () => {
  const contractors = loadPolicy(join(dir, 'contractors.yaml'));

  it('admits only the listed tools, case-insensitively, and denies a call outside them at evaluate', () => {
    expect(contractors.allowsTool('get_weather')).toBe(true);
    expect(contractors.allowsTool('Search_Docs')).toBe(true);
    expect(contractors.allowsTool('delete_file')).toBe(false);
    const act = deleteAct();
    expect(contractors.evaluate(act)).toEqual({
      decision: 'deny',
      code: 'EF_NOT_AUTHORIZED',
      reason: 'delete_file is not in allowed_tools',
    });
  });

  it('absent, every tool is admitted', () => {
    expect(loadPolicy(join(dir, 'staff.yaml')).allowsTool('anything')).toBe(true);
  });
});
