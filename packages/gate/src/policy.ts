/**
 * The gate's policy: assigns `consequence_class` per tool before the model names it, defines
 * the hot envelopes that issue authority automatically for low-consequence acts, and
 * escalates or denies the rest (Tool-Use Binding draft: consequence classes, pilot, out of scope).
 *
 * A policy is a JSON or YAML document (or the same as a typed object), validated with zod.
 * Invalid documents throw `PolicyError` with every problem listed by path.
 */
import { readFileSync } from 'node:fs';
import { canonicalSha256Base64url, VrpError } from '@vrpkit/core';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { type AgentCandidateAct, CONSEQUENCE_CLASSES, type ConsequenceClass, PROVENANCE_SOURCES, type ProvenanceSource } from './act.js';
import type { EfCode } from './errors.js';
import type { ClassifyInput } from './host/act-context.js';

/** Classes for which fail-closed is "the only conforming behavior" (tool-binding -03): never in a hot envelope. */
export const FAIL_CLOSED_CLASSES: readonly ConsequenceClass[] = ['FINANCIAL', 'PHYSICAL', 'NETWORK_CONTROL'];

const consequenceClass = z.enum(CONSEQUENCE_CLASSES);
const provenance = z.enum(PROVENANCE_SOURCES);
/** A `*`-wildcard pattern over tool ids, endpoints or destinations. */
const glob = z.string().min(1);

const toolRuleSchema = z.strictObject({
  /** Tool id pattern, e.g. `payout_*`. */
  tool: glob,
  /** Function id pattern (computer-use actions are function ids of the computer tool). */
  function: glob.optional(),
  /** Endpoint pattern: the rule applies only to this server / origin. */
  endpoint: glob.optional(),
  consequence_class: consequenceClass,
});

const hotEnvelopeSchema = z
  .strictObject({
    name: z.string().min(1),
    consequence_classes: z.array(consequenceClass).min(1),
    /** Tool id patterns; absent = any tool of those classes. */
    tools: z.array(glob).min(1).optional(),
    /** Destination id patterns; absent = any destination. */
    destinations: z.array(glob).min(1).optional(),
    /** Allowed instruction provenance; absent = any (the provenance rules run first). */
    provenance: z.array(provenance).min(1).optional(),
    authority_ttl_seconds: z.number().int().positive().max(3600).optional(),
  })
  .superRefine((env, ctx) => {
    for (const c of env.consequence_classes)
      if (FAIL_CLOSED_CLASSES.includes(c))
        ctx.addIssue({
          code: 'custom',
          path: ['consequence_classes'],
          message: `${c} is fail-closed and cannot be issued automatically by a hot envelope`,
        });
  });

const provenanceRuleSchema = z.strictObject({
  name: z.string().min(1),
  /** `unknown` also matches an act without instruction_provenance. */
  sources: z.array(provenance).min(1),
  consequence_classes: z.array(consequenceClass).min(1),
  action: z.enum(['deny', 'escalate']),
});

/** A web origin (`https://forms.example.com`, exactly as `URL.origin` writes it): https, or http on a loopback host. */
const webOrigin = z.string().refine((s) => {
  try {
    const u = new URL(s);
    const loopback = u.hostname === 'localhost' || u.hostname === '127.0.0.1' || u.hostname === '[::1]';
    return u.origin === s && (u.protocol === 'https:' || (u.protocol === 'http:' && loopback));
  } catch {
    return false;
  }
}, 'an origin such as https://forms.example.com (scheme, host and port only; http only on a loopback host)');

/** A dotted path to an argument (`amount`, `payment.payee`): own properties only. */
const argumentPath = z.string().regex(/^[A-Za-z0-9_$-]+(?:\.[A-Za-z0-9_$-]+)*$/, 'not a dotted argument path');

/**
 * Value limits for the acts of matching tools (Tool-Use Binding draft, T-B: "payout denied when
 * above envelope"). Every limit whose patterns match an act applies; an act outside any of them
 * is denied at authorize and again at enforce, whatever authority it holds.
 */
const limitSchema = z.strictObject({
  tool: glob,
  function: glob.optional(),
  /**
   * Amount caps: the argument at `amount` (a JSON number or a decimal string such as "150.00", in the
   * unit `max` is written in) may not exceed `max` for its currency. Compared exactly, as decimals.
   */
  amounts: z
    .array(
      z.strictObject({
        amount: argumentPath,
        /** Where the ISO 4217 currency code is; absent: `max` must name `*`. */
        currency: argumentPath.optional(),
        /** Largest amount per currency code; `*` for every currency not named. A currency not covered is denied. */
        max: z.record(
          z.string().regex(/^(?:[A-Z]{3}|\*)$/, 'a currency code or *'),
          z.number().refine((n) => decimalOf(n) !== null, 'a non-negative plain decimal'),
        ),
      }),
    )
    .min(1)
    .optional(),
  /** Allow-lists of argument values (payee, recipient …): the value at `argument` must be a string matching one pattern. */
  arguments: z
    .array(z.strictObject({ argument: argumentPath, values: z.array(glob).min(1) }))
    .min(1)
    .optional(),
  /** Destination id patterns the act's destination must match. */
  destinations: z.array(glob).min(1).optional(),
});

export type ToolRule = z.infer<typeof toolRuleSchema>;
export type ArgumentLimit = z.infer<typeof limitSchema>;
export type HotEnvelope = z.infer<typeof hotEnvelopeSchema>;
export type ProvenanceRule = z.infer<typeof provenanceRuleSchema>;

/**
 * Tool-Use Binding draft, T-A and out of scope: instructions from retrieved content may not send
 * (EF_INSTRUCTION_PROVENANCE_FAILURE); unknown provenance plus a high consequence class escalates.
 */
export const DEFAULT_PROVENANCE_RULES: readonly ProvenanceRule[] = [
  {
    name: 'injected-communication',
    sources: ['retrieval', 'tool_output', 'unknown'],
    consequence_classes: ['COMMUNICATION'],
    action: 'deny',
  },
  {
    name: 'unverified-high-consequence',
    sources: ['retrieval', 'tool_output', 'unknown'],
    consequence_classes: ['FINANCIAL', 'PHYSICAL', 'NETWORK_CONTROL', 'PERSISTENT_STATE_CHANGE', 'DATA_DISCLOSURE', 'OTHER'],
    action: 'escalate',
  },
];

export const policyDocumentSchema = z
  .strictObject({
    version: z.literal(1),
    policy_id: z.string().min(1),
    /** Explicit classifications, checked first, in order. */
    tools: z.array(toolRuleSchema).default([]),
    /**
     * The tools this policy lets its principals see and call (tool id globs); absent: every tool.
     * A gateway filters `tools/list` by it and denies a call outside it again at enforce, so a
     * client that calls a tool it was never shown gets nothing (issue 33: per-tool authorization
     * checked at call time, not only at listing).
     */
    allowed_tools: z.array(glob).min(1).optional(),
    /** Fall back to the informative defaults (`DEFAULT_TOOL_RULES`) after `tools`. */
    informative_defaults: z.boolean().default(true),
    /** Class of a tool nothing matched. */
    default_consequence_class: consequenceClass.default('OTHER'),
    hot_envelopes: z.array(hotEnvelopeSchema).default([]),
    provenance_rules: z.array(provenanceRuleSchema).default([...DEFAULT_PROVENANCE_RULES]),
    /** Value limits per tool (amount caps per currency, argument allow-lists, destinations). */
    limits: z.array(limitSchema).default([]),
    /** Classes never authorized, not even by a person. */
    deny_classes: z.array(consequenceClass).default([]),
    /** What happens to an act outside every hot envelope. */
    otherwise: z.enum(['escalate', 'deny']).default('escalate'),
    /** Lifetime of authority issued after an approval (and of envelopes without their own). */
    authority_ttl_seconds: z.number().int().positive().max(3600).default(60),
    /**
     * How a person may decide this policy's escalated acts (issue 33 item 3). `self_approval`: an
     * approver may approve an act whose principal is their own subject; absent or false, they may not.
     * No default is written in: a policy without it keeps the digest it had.
     */
    approval: z.strictObject({ self_approval: z.boolean().optional() }).optional(),
    /**
     * Origins a downstream MCP server's URL-mode elicitation may send the agent's user to (issue 32
     * item 5; MCP 2026-07-28 client/elicitation, Safe URL Handling); absent: none — every such request
     * is declined to the server. No default, so a policy without it keeps its digest (and epoch).
     */
    elicitation_url_origins: z.array(webOrigin).min(1).optional(),
  })
  .superRefine((doc, ctx) => {
    doc.limits.forEach((limit, i) => {
      for (const [j, a] of (limit.amounts ?? []).entries())
        if (a.currency === undefined && !Object.hasOwn(a.max, '*'))
          ctx.addIssue({
            code: 'custom',
            path: ['limits', i, 'amounts', j, 'max'],
            message: 'without a currency argument, max must name *',
          });
    });
    doc.hot_envelopes.forEach((env, i) => {
      for (const c of env.consequence_classes)
        if (doc.deny_classes.includes(c))
          ctx.addIssue({ code: 'custom', path: ['hot_envelopes', i, 'consequence_classes'], message: `${c} is also in deny_classes` });
    });
  });

/** A policy document as written (defaults optional). */
export type PolicyDocument = z.input<typeof policyDocumentSchema>;
type NormalizedPolicy = z.output<typeof policyDocumentSchema>;

export class PolicyError extends VrpError {
  constructor(message: string, issues?: string[]) {
    super('invalid_policy', message, issues ? { issues } : undefined);
  }
}

/**
 * Informative default classes (Tool-Use Binding draft, consequence classes and pilot: COMMUNICATION,
 * FINANCIAL, PERSISTENT_STATE_CHANGE are enforced, `maps.search` stays hot). Ordered from
 * the most to the least consequential, so `payout_create` is FINANCIAL before `*_create`
 * could make it a state change. Unknown tools fall through to `default_consequence_class`.
 */
export const DEFAULT_TOOL_RULES: readonly ToolRule[] = [
  ...['pay*', '*payout*', '*payment*', '*transfer*', '*refund*', '*charge*', '*invoice_pay*', '*purchase*', '*checkout*', '*wire*'].map(
    (tool) => ({ tool, consequence_class: 'FINANCIAL' as const }),
  ),
  ...['*firewall*', '*dns*', '*network*', '*vpn*'].map((tool) => ({ tool, consequence_class: 'NETWORK_CONTROL' as const })),
  ...['*actuat*', '*door*', 'lock_*', '*unlock*', '*device_*', '*robot*'].map((tool) => ({ tool, consequence_class: 'PHYSICAL' as const })),
  ...['*email*', '*mail_send*', '*send*', '*message*', '*sms*', '*slack*', '*post_*', '*notify*', '*reply*', '*publish*'].map((tool) => ({
    tool,
    consequence_class: 'COMMUNICATION' as const,
  })),
  // Computer use (Tool-Use Binding draft, computer use): passive actions are informational, a screenshot can disclose, the rest changes state.
  // Anthropic's action names, then OpenAI's computer_call action types.
  ...['mouse_move', 'cursor_position', 'scroll', 'wait', 'zoom', 'move'].map((fn) => ({
    tool: 'computer*',
    function: fn,
    consequence_class: 'INFORMATIONAL' as const,
  })),
  { tool: 'computer*', function: 'screenshot', consequence_class: 'DATA_DISCLOSURE' },
  ...['*mail*', '*bank*', '*pay*', '*admin*'].map((endpoint) => ({
    tool: 'computer*',
    endpoint,
    consequence_class:
      endpoint === '*mail*' ? ('COMMUNICATION' as const) : endpoint === '*admin*' ? ('NETWORK_CONTROL' as const) : ('FINANCIAL' as const),
  })),
  { tool: 'computer*', consequence_class: 'PERSISTENT_STATE_CHANGE' },
  ...['*export*', '*share*', '*upload*', '*screenshot*', '*download*'].map((tool) => ({
    tool,
    consequence_class: 'DATA_DISCLOSURE' as const,
  })),
  ...[
    '*write*',
    '*create*',
    '*update*',
    '*delete*',
    '*remove*',
    '*deploy*',
    '*memory*',
    '*save*',
    '*set_*',
    '*exec*',
    '*shell*',
    '*run*',
  ].map((tool) => ({ tool, consequence_class: 'PERSISTENT_STATE_CHANGE' as const })),
  ...['*search*', '*lookup*', 'get_*', '*_get', 'list_*', '*_list', 'read_*', '*_read', '*fetch*', '*query*', '*weather*', '*maps*'].map(
    (tool) => ({ tool, consequence_class: 'INFORMATIONAL' as const }),
  ),
];

export type PolicyDecision =
  | { decision: 'issue'; envelope: string; ttlMs: number; reason: string }
  | { decision: 'escalate'; code: EfCode; reason: string }
  | { decision: 'deny'; code: EfCode; reason: string };

export interface Policy {
  readonly policyId: string;
  /** JCS SHA-256 of the normalized document: a different policy bumps the policy epoch. */
  readonly digest: string;
  readonly document: NormalizedPolicy;
  /** Lifetime of authority issued after a person approved the act. */
  readonly approvalTtlMs: number;
  /** Whether an approver may approve an act whose principal is their own subject (`approval.self_approval`; default false). */
  readonly selfApproval: boolean;
  /** The consequence class of a tool, assigned before the model names it. */
  classify(tool: ClassifyInput): ConsequenceClass;
  /** Whether `allowed_tools` admits this tool id (listed and callable). */
  allowsTool(toolId: string): boolean;
  /** Decide a candidate act: issue (hot envelope), escalate to a person, or deny. */
  evaluate(act: AgentCandidateAct): PolicyDecision;
  /**
   * The value limits for the act's live arguments (the ones its digest covers): null when every
   * matching limit holds, else the deny. Missing or malformed limited values are denied (fail closed).
   */
  checkArguments(act: AgentCandidateAct, args: unknown): { code: EfCode; reason: string } | null;
  /** Whether a downstream's URL-mode elicitation may open `url`: its origin is in `elicitation_url_origins` (null: not a URL). */
  allowsElicitationUrl(url: string): { allowed: boolean; origin: string | null };
}

/** Load a policy from a JSON/YAML file path or a typed document. Throws `PolicyError` with every issue. */
export function loadPolicy(fileOrObject: string | PolicyDocument): Policy {
  const doc = typeof fileOrObject === 'string' ? readPolicyFile(fileOrObject) : fileOrObject;
  const r = policyDocumentSchema.safeParse(doc);
  if (!r.success) {
    const issues = r.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(policy)'}: ${i.message}`);
    throw new PolicyError(`invalid policy: ${issues.join('; ')}`, issues);
  }
  return compilePolicy(r.data);
}

function readPolicyFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new PolicyError(`cannot read policy file ${file}: ${(e as Error).message}`);
  }
  try {
    // YAML 1.2 is a superset of JSON, so one parser reads both; duplicate keys are errors.
    return parseYaml(text, { uniqueKeys: true });
  } catch (e) {
    throw new PolicyError(`policy file ${file} is not valid JSON or YAML: ${(e as Error).message}`);
  }
}

function compilePolicy(doc: NormalizedPolicy): Policy {
  const classify = compileClassifier(doc);
  const allowed = doc.allowed_tools?.map(globRegex);
  const allowsTool = (toolId: string) => !allowed || allowed.some((re) => re.test(toolId.toLowerCase()));
  return {
    policyId: doc.policy_id,
    digest: canonicalSha256Base64url(doc),
    document: doc,
    approvalTtlMs: doc.authority_ttl_seconds * 1000,
    selfApproval: doc.approval?.self_approval === true,
    classify,
    allowsTool,
    evaluate: compileEvaluator(doc, classify, allowsTool),
    checkArguments: compileLimits(doc),
    allowsElicitationUrl: (url) => {
      let origin: string;
      try {
        origin = new URL(url).origin;
      } catch {
        return { allowed: false, origin: null };
      }
      // An opaque origin ("null": data:, javascript:, file:) is never in the list.
      return { allowed: origin !== 'null' && (doc.elicitation_url_origins ?? []).includes(origin), origin };
    },
  };
}

type ArgumentsCheck = Policy['checkArguments'];

/** The tool rules (the document's, then the informative defaults): the first match assigns the class. */
function compileClassifier(doc: NormalizedPolicy): Policy['classify'] {
  const rules = [...doc.tools, ...(doc.informative_defaults ? DEFAULT_TOOL_RULES : [])].map((r) => ({
    class: r.consequence_class,
    tool: globRegex(r.tool),
    fn: r.function ? globRegex(r.function) : null,
    endpoint: r.endpoint ? globRegex(r.endpoint) : null,
  }));
  return (tool) => {
    const id = tool.tool_id.toLowerCase();
    const fn = (tool.function_id ?? tool.tool_id).toLowerCase();
    const endpoint = tool.tool_endpoint?.toLowerCase();
    for (const r of rules) {
      if (!r.tool.test(id)) continue;
      if (r.fn && !r.fn.test(fn)) continue;
      if (r.endpoint && !(endpoint !== undefined && r.endpoint.test(endpoint))) continue;
      return r.class;
    }
    return doc.default_consequence_class;
  };
}

/** The decision for an act: its class must be the policy's; then deny classes, provenance rules, hot envelopes, `otherwise`. */
function compileEvaluator(doc: NormalizedPolicy, classify: Policy['classify'], allowsTool: Policy['allowsTool']): Policy['evaluate'] {
  const envelopes = doc.hot_envelopes.map((e) => ({
    ...e,
    toolRes: e.tools?.map(globRegex),
    destRes: e.destinations?.map(globRegex),
    ttlMs: (e.authority_ttl_seconds ?? doc.authority_ttl_seconds) * 1000,
  }));
  return (act) => {
    if (!allowsTool(act.tool.tool_id))
      return { decision: 'deny', code: 'EF_NOT_AUTHORIZED', reason: `${act.tool.tool_id} is not in allowed_tools` };
    const cls = classify(act.tool);
    // "Misclassifying payout as INFORMATIONAL is a profile failure": the act must carry the policy's class.
    if (act.consequence_class !== cls)
      return { decision: 'deny', code: 'EF_SCOPE_MISMATCH', reason: `act claims ${act.consequence_class}, policy assigns ${cls}` };
    if (doc.deny_classes.includes(cls)) return { decision: 'deny', code: 'EF_NOT_AUTHORIZED', reason: `${cls} is in deny_classes` };
    const source: ProvenanceSource = act.instruction_provenance?.source_type ?? 'unknown';
    for (const rule of doc.provenance_rules) {
      if (!rule.sources.includes(source) || !rule.consequence_classes.includes(cls)) continue;
      const reason = `provenance rule ${rule.name}: ${source} + ${cls}`;
      return rule.action === 'deny'
        ? { decision: 'deny', code: 'EF_INSTRUCTION_PROVENANCE_FAILURE', reason }
        : { decision: 'escalate', code: 'EF_APPROVAL_REQUIRED', reason };
    }
    const toolId = act.tool.tool_id.toLowerCase();
    const dest = act.destination?.destination_id.toLowerCase();
    for (const env of envelopes) {
      if (!env.consequence_classes.includes(cls)) continue;
      if (env.toolRes && !env.toolRes.some((re) => re.test(toolId))) continue;
      if (env.destRes && !(dest !== undefined && env.destRes.some((re) => re.test(dest)))) continue;
      if (env.provenance && !env.provenance.includes(source)) continue;
      return { decision: 'issue', envelope: env.name, ttlMs: env.ttlMs, reason: `hot envelope ${env.name}` };
    }
    return doc.otherwise === 'escalate'
      ? { decision: 'escalate', code: 'EF_APPROVAL_REQUIRED', reason: `${cls} outside every hot envelope` }
      : { decision: 'deny', code: 'EF_NOT_AUTHORIZED', reason: `${cls} outside every hot envelope` };
  };
}

/** The value limits (Tool-Use Binding draft, T-B): amount caps per currency, argument and destination allow-lists. */
function compileLimits(doc: NormalizedPolicy): ArgumentsCheck {
  const limits = doc.limits.map((l) => ({
    ...l,
    toolRe: globRegex(l.tool),
    fnRe: l.function ? globRegex(l.function) : null,
    destRes: l.destinations?.map(globRegex),
    allow: l.arguments?.map((a) => ({ path: a.argument, res: a.values.map(globRegex) })),
  }));
  return (act, args) => {
    const toolId = act.tool.tool_id.toLowerCase();
    const fn = act.tool.function_id.toLowerCase();
    for (const l of limits) {
      if (!l.toolRe.test(toolId) || (l.fnRe && !l.fnRe.test(fn))) continue;
      const where = `limit for ${l.tool}`;
      for (const a of l.amounts ?? []) {
        const over = amountOver(where, a, args);
        if (over) return over;
      }
      for (const a of l.allow ?? []) {
        const value = argumentAt(args, a.path);
        if (typeof value !== 'string' || !a.res.some((re) => re.test(value.toLowerCase())))
          return { code: 'EF_ENVELOPE_EXCEEDED', reason: `${where}: ${a.path} is not an allowed value` };
      }
      const dest = act.destination?.destination_id.toLowerCase();
      if (l.destRes && !(dest !== undefined && l.destRes.some((re) => re.test(dest))))
        return { code: 'EF_DESTINATION_MISMATCH', reason: `${where}: destination is not allowed` };
    }
    return null;
  };
}

/** One amount cap against the live arguments: null when it holds, else the deny (missing or malformed values fail closed). */
function amountOver(
  where: string,
  a: { amount: string; currency?: string | undefined; max: Record<string, string | number> },
  args: unknown,
): ReturnType<ArgumentsCheck> {
  const amount = decimalOf(argumentAt(args, a.amount));
  if (amount === null) return { code: 'EF_ENVELOPE_EXCEEDED', reason: `${where}: ${a.amount} is not a non-negative decimal amount` };
  const currency = a.currency === undefined ? '*' : argumentAt(args, a.currency);
  // ISO 4217 alphabetic codes are three ASCII letters; anything else ("EUR ", full-width "ＥＵＲ",
  // "eur\0") is refused, never matched to the '*' cap (issue 36 defect 18).
  if (typeof currency !== 'string' || (currency !== '*' && !ISO_4217_ALPHA.test(currency)))
    return { code: 'EF_ENVELOPE_EXCEEDED', reason: `${where}: ${a.currency} is not a currency code` };
  const code = currency.toUpperCase();
  const max = Object.hasOwn(a.max, code) ? a.max[code] : a.max['*'];
  if (max === undefined) return { code: 'EF_ENVELOPE_EXCEEDED', reason: `${where}: currency ${code} is not allowed` };
  const cap = decimalOf(max);
  if (cap === null || compareDecimals(amount, cap) > 0)
    return { code: 'EF_ENVELOPE_EXCEEDED', reason: `${where}: ${a.amount} in ${code} is above ${max}` };
  return null;
}

/** An ISO 4217 alphabetic currency code, in either case. */
const ISO_4217_ALPHA = /^[A-Za-z]{3}$/;

/** A non-negative amount as [integer digits, fraction digits], or null: a JSON number or a decimal string, never exponent notation. */
function decimalOf(v: unknown): [string, string] | null {
  const text = typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= Number.MAX_SAFE_INTEGER ? String(v) : v;
  if (typeof text !== 'string') return null;
  const m = /^(\d{1,30})(?:\.(\d{1,30}))?$/.exec(text);
  return m ? [m[1]!, m[2] ?? ''] : null;
}

/** Exact comparison of two decimals (no binary floating point: "150.00" vs 150 is equal). */
function compareDecimals(a: [string, string], b: [string, string]): number {
  const scale = Math.max(a[1].length, b[1].length);
  const x = BigInt(a[0] + a[1].padEnd(scale, '0'));
  const y = BigInt(b[0] + b[1].padEnd(scale, '0'));
  return x === y ? 0 : x > y ? 1 : -1;
}

/** The value at a dotted path of own properties, or undefined. */
function argumentAt(args: unknown, path: string): unknown {
  let v: unknown = args;
  for (const key of path.split('.')) {
    if (typeof v !== 'object' || v === null || Array.isArray(v) || !Object.hasOwn(v, key)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** `*` matches any run of characters; everything else is literal; case-insensitive. */
function globRegex(pattern: string): RegExp {
  const body = pattern
    .toLowerCase()
    .split('*')
    .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`);
}
