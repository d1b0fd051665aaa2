/**
 * Per-principal policy (issue 33 item 2): a team's gateway holds one policy set — a default policy
 * and members chosen by the token's subject, client or group claim (first match wins, in the
 * order written) — and decides each principal's acts by its member.
 *
 * The policy in force is the set: every member carries the set's digest, so the store's policy
 * epoch moves when any member changes, and never flips between members of one set (a Gate
 * records its policy's digest at start; per-member digests would bump the epoch on every switch).
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { canonicalSha256Base64url } from '@vrpkit/core';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { loadPolicy, type Policy, PolicyError } from '../policy.js';
import type { Principal } from './resource-server.js';

const matchSchema = z
  .strictObject({
    subject: z.string().min(1).optional(),
    client: z.string().min(1).optional(),
    group: z.string().min(1).optional(),
  })
  .refine((m) => m.subject !== undefined || m.client !== undefined || m.group !== undefined, 'name a subject, a client or a group');

export const policySetSchema = z.strictObject({
  version: z.literal(1),
  policy_set_id: z.string().min(1),
  /** The policy of a principal no member matches (a path relative to the set file). */
  default: z.string().min(1),
  members: z
    .array(
      z.strictObject({
        name: z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, 'lowercase letters, digits, - and _'),
        when: matchSchema,
        policy: z.string().min(1),
      }),
    )
    .default([]),
});

export type PolicySetDocument = z.input<typeof policySetSchema>;

export interface PolicySetMember {
  /** `default`, or the member's name: recorded in the audit with the principal. */
  name: string;
  policy: Policy;
}

export interface PolicySet {
  readonly policySetId: string;
  /** JCS SHA-256 over the set and every member policy's digest. */
  readonly digest: string;
  readonly members: readonly PolicySetMember[];
  /** The member that decides this principal's acts. */
  select(principal: Pick<Principal, 'subject' | 'clientId' | 'groups'>): PolicySetMember;
  /**
   * The members that could decide this principal's acts when its groups are not known (the
   * approvals page reads an act's subject and client, not the token's groups): each member matched
   * by a group whose other conditions hold, in order, then the member `select` would pick without groups.
   */
  possibleMembers(principal: Pick<Principal, 'subject' | 'clientId'>): PolicySetMember[];
}

/** Load a policy set from its YAML/JSON file; member policies are read relative to it. Throws `PolicyError` with every issue. */
export function loadPolicySet(file: string): PolicySet {
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(file, 'utf8'), { uniqueKeys: true });
  } catch (e) {
    throw new PolicyError(`cannot read policy set ${file}: ${(e as Error).message}`);
  }
  const r = policySetSchema.safeParse(doc);
  if (!r.success) {
    const issues = r.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(policy set)'}: ${i.message}`);
    throw new PolicyError(`invalid policy set ${file}: ${issues.join('; ')}`, issues);
  }
  const names = r.data.members.map((m) => m.name);
  const duplicate = names.find((n, i) => names.indexOf(n) !== i || n === 'default');
  if (duplicate) throw new PolicyError(`invalid policy set ${file}: member name ${duplicate} is used twice (or is "default")`);
  const at = (path: string) => resolve(dirname(file), path);
  return compilePolicySet(
    r.data,
    loadPolicy(at(r.data.default)),
    r.data.members.map((m) => loadPolicy(at(m.policy))),
  );
}

type NormalizedSet = z.output<typeof policySetSchema>;

function compilePolicySet(doc: NormalizedSet, fallback: Policy, memberPolicies: Policy[]): PolicySet {
  const digest = canonicalSha256Base64url({
    set: doc,
    policies: [fallback.digest, ...memberPolicies.map((p) => p.digest)],
  });
  const asMember = (name: string, policy: Policy): PolicySetMember => ({ name, policy: { ...policy, digest } });
  const members = doc.members.map((m, i) => ({ when: m.when, member: asMember(m.name, memberPolicies[i] as Policy) }));
  const otherwise = asMember('default', fallback);
  return {
    policySetId: doc.policy_set_id,
    digest,
    members: [otherwise, ...members.map((m) => m.member)],
    select(principal) {
      const hit = members.find(
        ({ when }) =>
          (when.subject === undefined || when.subject === principal.subject) &&
          (when.client === undefined || when.client === principal.clientId) &&
          (when.group === undefined || principal.groups.includes(when.group)),
      );
      return hit?.member ?? otherwise;
    },
    possibleMembers(principal) {
      const known = members.filter(
        ({ when }) =>
          (when.subject === undefined || when.subject === principal.subject) &&
          (when.client === undefined || when.client === principal.clientId),
      );
      const definite = known.findIndex(({ when }) => when.group === undefined);
      const before = (definite < 0 ? known : known.slice(0, definite)).map((m) => m.member);
      return [...before, definite < 0 ? otherwise : (known[definite] as (typeof known)[number]).member];
    },
  };
}
