/**
 * The proxy's principals (issue 33 item 2): with a resource server in front, each request carries
 * the token's subject and client; the act is theirs (`initiating_principal`, `agent`), and the
 * policy member the set chooses for them decides it — at `tools/list` (what they are shown) and
 * again at `tools/call` (what they may run), since a client can call a tool it was never shown.
 */
import type { ConsequenceClass } from '../act.js';
import type { ClassifyInput } from '../host/act-context.js';
import type { Policy } from '../policy.js';
import type { PolicySet } from './policy-set.js';
import type { Principal } from './resource-server.js';

export interface ProxyPrincipals<G> {
  /** The gate that decides this principal's acts (one per policy member, all on one store and sink). */
  gateFor(principal: Principal): G;
  /** The policy member's name, recorded with the principal. */
  memberOf(principal: Principal): string;
  /** Whether this principal is shown the tool (and may call it: evaluate denies it otherwise). */
  allowsTool(principal: Principal, toolName: string): boolean;
  /** The consequence class this principal's policy member gives the tool (what the scopes per class key on). */
  classify(principal: Principal, tool: ClassifyInput): ConsequenceClass;
}

/**
 * The principals over one gate per policy member (`gates` by member name; `default` for a principal
 * no member matches, and for every principal when there is no set).
 */
export function proxyPrincipals<G>(policy: Policy, set: PolicySet | undefined, gates: ReadonlyMap<string, G>): ProxyPrincipals<G> {
  const memberOf = (principal: Principal) => (set ? set.select(principal) : { name: 'default', policy });
  return {
    gateFor(principal) {
      const gate = gates.get(memberOf(principal).name);
      if (gate === undefined) throw new Error(`no gate for policy member ${memberOf(principal).name}`);
      return gate;
    },
    memberOf: (principal) => memberOf(principal).name,
    allowsTool: (principal, toolName) => memberOf(principal).policy.allowsTool(toolName),
    classify: (principal, tool) => memberOf(principal).policy.classify(tool),
  };
}
