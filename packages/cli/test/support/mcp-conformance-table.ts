/**
 * What the official MCP conformance suite (`@modelcontextprotocol/conformance` 0.2.0-alpha.12, server
 * scenarios of each revision's requirement set) is expected to find, scenario by scenario and
 * revision by revision, on: the reference server `server-everything` connected to directly, the
 * same server through `vrp gate proxy`, and a vrpkit node (a platform tenant is a node and must
 * answer the same). The one source of the table: interop-conformance.test.ts fails when a cell
 * expected to pass regresses, and docs/conformance.md holds `renderConformanceTable()`'s output
 * (mcp-conformance-docs.test.ts holds the two equal).
 *
 * Most server scenarios exercise the suite's own fixture server (tools such as `test_image_content`,
 * prompts such as `test_simple_prompt`), so on other servers they are not applicable: such a cell
 * still names the checks that must pass (usually `wire-schema-valid`: every message the server sent
 * is valid per the revision's JSON schema).
 */
import { REVISIONS, type Revision } from './interop.js';

/** The columns: the direct reference server, through the gateway, a vrpkit node (and platform tenant). */
export const CONFORMANCE_COLUMNS = ['everything', 'proxy', 'vrp'] as const;
export type ConformanceColumn = (typeof CONFORMANCE_COLUMNS)[number];
/** The servers the suite runs against, each judged by its column. */
export const CONFORMANCE_TARGETS = ['everything', 'proxy', 'node', 'tenant'] as const;
export type ConformanceTarget = (typeof CONFORMANCE_TARGETS)[number];
export const COLUMN_OF: Record<ConformanceTarget, ConformanceColumn> = {
  everything: 'everything',
  proxy: 'proxy',
  node: 'vrp',
  tenant: 'vrp',
};

const COLUMN_TITLES: Record<ConformanceColumn, string> = {
  everything: 'server-everything, direct',
  proxy: 'through `vrp gate proxy`',
  vrp: 'vrpkit node, platform tenant',
};

/** Why a scenario is not applicable (`na`) or fails (`fails`) on a target. */
export const REASONS = {
  fixture:
    "exercises the suite's own fixture server (a tool such as `test_image_content`, a prompt such as `test_simple_prompt`, a resource such as `test://static-text`); server-everything defines other ones",
  unpinned:
    'the fixture tool `test_simple_text`/`test_error_handling` is not on the server: the proxy refuses a tool it has not pinned (-32602), where server-everything answers an `isError` text that these scenarios happen to count',
  oneTool:
    'a one-tool server: a node serves `get_verified_stay_offer` only (Node Tool Binding v0.1 §3), no prompts, resources, completions, logging or fixture tools',
  localhost:
    "the scenario needs a localhost URL; a node answers only for its canonical domain (any other Host is 421, Core VRP v0.1 §2), tested by the node's Host-guard tests",
  nothingJudged:
    'the suite judged nothing here: every check of the scenario was skipped (it needs a session or a standalone GET stream, which a stateless endpoint does not offer)',
  tasks: 'Tasks is an extension, never scored for the revision; none of these servers declares it',
  everything2025: 'server-everything (SDK v1) speaks 2025-11-25 only: every 2026-07-28 request is refused "Server not initialized"',
  rebindingEverything: "server-everything answers a foreign Host/Origin with 200 (the reference server's own defect)",
  terminated404:
    "a request on a terminated session is answered 400, not 404 (Streamable HTTP, session management: the server MUST answer 404); the reference server's own defect (the proxy answers 404)",
} as const;
export type Reason = keyof typeof REASONS;

/**
 * `pass`: every check succeeds. `na`/`fails`: not applicable, or a known failure, for the reason
 * named; the `checks` listed must still succeed.
 */
export type Expectation = 'pass' | { na: Reason; checks?: string[] } | { fails: Reason; checks?: string[] };
export type ConformanceRow = Record<ConformanceColumn, Expectation>;

export const EXPECTED: Record<Revision, Record<string, ConformanceRow>> = {
  '2025-11-25': {
    'completion-complete': {
      everything: { na: 'fixture', checks: ['wire-schema-valid'] },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'dns-rebinding-protection': {
      everything: { fails: 'rebindingEverything', checks: ['localhost-host-valid-accepted'] },
      proxy: 'pass',
      vrp: { na: 'localhost' },
    },
    'elicitation-sep1034-defaults': {
      everything: { na: 'fixture', checks: ['wire-schema-valid'] },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'elicitation-sep1330-enums': {
      everything: { na: 'fixture', checks: ['wire-schema-valid'] },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'json-schema-2020-12': {
      everything: { na: 'fixture', checks: ['wire-schema-valid'] },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'logging-set-level': { everything: 'pass', proxy: 'pass', vrp: { na: 'oneTool', checks: ['wire-schema-valid'] } },
    ping: { everything: 'pass', proxy: 'pass', vrp: 'pass' },
    'prompts-get-embedded-resource': {
      everything: { na: 'fixture', checks: ['wire-schema-valid'] },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'prompts-get-simple': {
      everything: { na: 'fixture', checks: ['wire-schema-valid'] },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'prompts-get-with-args': {
      everything: { na: 'fixture', checks: ['wire-schema-valid'] },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'prompts-get-with-image': {
      everything: { na: 'fixture', checks: ['wire-schema-valid'] },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'prompts-list': { everything: 'pass', proxy: 'pass', vrp: { na: 'oneTool', checks: ['wire-schema-valid'] } },
    'resources-list': { everything: 'pass', proxy: 'pass', vrp: { na: 'oneTool', checks: ['wire-schema-valid'] } },
    'resources-read-binary': {
      everything: { na: 'fixture', checks: ['wire-schema-valid'] },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'resources-read-text': {
      everything: { na: 'fixture', checks: ['wire-schema-valid'] },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'resources-subscribe': { everything: 'pass', proxy: 'pass', vrp: { na: 'oneTool', checks: ['wire-schema-valid'] } },
    'resources-templates-read': {
      everything: { na: 'fixture', checks: ['wire-schema-valid'] },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'resources-unsubscribe': { everything: 'pass', proxy: 'pass', vrp: { na: 'oneTool', checks: ['wire-schema-valid'] } },
    'server-initialize': { everything: 'pass', proxy: 'pass', vrp: 'pass' },
    'server-session-lifecycle': {
      everything: { fails: 'terminated404', checks: ['server-session-delete-accepted', 'server-session-initialized-accepted'] },
      proxy: 'pass',
      vrp: { na: 'nothingJudged' },
    },
    'server-sse-multiple-streams': { everything: 'pass', proxy: 'pass', vrp: { na: 'nothingJudged' } },
    'server-sse-polling': {
      everything: { na: 'fixture', checks: ['server-sse-priming-event'] },
      proxy: { na: 'nothingJudged' },
      vrp: { na: 'nothingJudged' },
    },
    'tools-call-audio': {
      everything: { na: 'fixture', checks: ['wire-schema-valid'] },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'tools-call-elicitation': {
      everything: { na: 'fixture', checks: ['wire-schema-valid'] },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'tools-call-embedded-resource': {
      everything: { na: 'fixture', checks: ['wire-schema-valid'] },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'tools-call-error': {
      everything: 'pass',
      proxy: { na: 'unpinned', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'tools-call-image': {
      everything: { na: 'fixture', checks: ['wire-schema-valid'] },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'tools-call-mixed-content': {
      everything: { na: 'fixture', checks: ['wire-schema-valid'] },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'tools-call-sampling': {
      everything: { na: 'fixture', checks: ['wire-schema-valid'] },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'tools-call-simple-text': {
      everything: 'pass',
      proxy: { na: 'unpinned', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'tools-call-with-logging': {
      everything: { na: 'fixture', checks: ['wire-schema-valid'] },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'tools-call-with-progress': {
      everything: { na: 'fixture', checks: ['wire-schema-valid'] },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'tools-list': { everything: 'pass', proxy: 'pass', vrp: 'pass' },
  },
  '2026-07-28': {
    caching: {
      everything: { na: 'everything2025' },
      proxy: 'pass',
      vrp: {
        na: 'oneTool',
        checks: ['sep-2549-cache-scope-valid', 'sep-2549-tools-list-caching-hints', 'sep-2549-ttl-non-negative', 'wire-schema-valid'],
      },
    },
    'completion-complete': {
      everything: { na: 'everything2025' },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'dns-rebinding-protection': {
      everything: { fails: 'rebindingEverything', checks: ['localhost-host-rebinding-rejected'] },
      proxy: 'pass',
      vrp: { na: 'localhost' },
    },
    'http-custom-header-server-validation': {
      everything: { na: 'everything2025' },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'http-header-validation': {
      everything: { na: 'everything2025' },
      proxy: 'pass',
      vrp: 'pass',
    },
    'input-required-result-basic-elicitation': {
      everything: { na: 'everything2025' },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'input-required-result-basic-list-roots': {
      everything: { na: 'everything2025' },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'input-required-result-basic-sampling': {
      everything: { na: 'everything2025' },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'input-required-result-capability-check': {
      everything: { na: 'everything2025' },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'input-required-result-ignore-extra-params': { everything: { na: 'everything2025' }, proxy: 'pass', vrp: 'pass' },
    'input-required-result-missing-input-response': { everything: { na: 'everything2025' }, proxy: 'pass', vrp: 'pass' },
    'input-required-result-multi-round': {
      everything: { na: 'everything2025' },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'input-required-result-multiple-input-requests': {
      everything: { na: 'everything2025' },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'input-required-result-non-tool-request': {
      everything: { na: 'everything2025' },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'input-required-result-request-state': {
      everything: { na: 'everything2025' },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'input-required-result-result-type': {
      everything: { na: 'everything2025' },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'input-required-result-tampered-state': {
      everything: { na: 'everything2025' },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'input-required-result-unsupported-methods': {
      everything: { na: 'everything2025', checks: ['sep-2322-not-on-unsupported-requests'] },
      proxy: 'pass',
      vrp: 'pass',
    },
    'input-required-result-validate-input': { everything: 'pass', proxy: 'pass', vrp: 'pass' },
    'json-schema-2020-12': {
      everything: { na: 'everything2025' },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'prompts-get-embedded-resource': {
      everything: { na: 'everything2025' },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'prompts-get-simple': {
      everything: { na: 'everything2025' },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'prompts-get-with-args': {
      everything: { na: 'everything2025' },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'prompts-get-with-image': {
      everything: { na: 'everything2025' },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'prompts-list': { everything: { na: 'everything2025' }, proxy: 'pass', vrp: { na: 'oneTool', checks: ['wire-schema-valid'] } },
    'resources-list': { everything: { na: 'everything2025' }, proxy: 'pass', vrp: { na: 'oneTool', checks: ['wire-schema-valid'] } },
    'resources-read-binary': {
      everything: { na: 'everything2025' },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'resources-read-text': {
      everything: { na: 'everything2025' },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'resources-templates-read': {
      everything: { na: 'everything2025' },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'sep-2164-resource-not-found': {
      everything: { na: 'everything2025', checks: ['sep-2164-no-empty-contents'] },
      proxy: 'pass',
      vrp: 'pass',
    },
    'server-sse-multiple-streams': { everything: { na: 'everything2025' }, proxy: 'pass', vrp: 'pass' },
    'server-stateless': {
      everything: {
        na: 'everything2025',
        checks: [
          'sep-2575-http-server-meta-invalid-400',
          'sep-2575-http-server-unsupported-version-400',
          'sep-2575-server-honors-notification-filter',
        ],
      },
      proxy: {
        na: 'fixture',
        checks: [
          'sep-2575-discover-capabilities-match-handlers',
          'sep-2575-http-server-error-jsonrpc-id',
          'sep-2575-http-server-header-mismatch-400',
          'sep-2575-http-server-meta-invalid-400',
          'sep-2575-http-server-method-not-found-404-initialize',
          'sep-2575-http-server-method-not-found-404-logging-setlevel',
          'sep-2575-http-server-method-not-found-404-ping',
          'sep-2575-http-server-method-not-found-404-resources-subscribe',
          'sep-2575-http-server-method-not-found-404-resources-unsubscribe',
          'sep-2575-http-server-unsupported-version-400',
          'sep-2575-request-meta-client-info-optional',
          'sep-2575-request-meta-invalid-missing-client-capabilities',
          'sep-2575-request-meta-invalid-missing-meta',
          'sep-2575-request-meta-invalid-missing-protocol-version',
          'sep-2575-server-declares-prompts-in-discover',
          'sep-2575-server-honors-notification-filter',
          'sep-2575-server-identifies-in-result-meta',
          'sep-2575-server-implements-discover',
          'sep-2575-server-sends-subscription-ack',
          'sep-2575-server-tags-subscription-id',
          'sep-2575-server-unsupported-version-error',
        ],
      },
      vrp: {
        na: 'oneTool',
        checks: [
          'sep-2575-discover-capabilities-match-handlers',
          'sep-2575-http-server-error-jsonrpc-id',
          'sep-2575-http-server-header-mismatch-400',
          'sep-2575-http-server-meta-invalid-400',
          'sep-2575-http-server-method-not-found-404',
          'sep-2575-http-server-method-not-found-404-initialize',
          'sep-2575-http-server-method-not-found-404-logging-setlevel',
          'sep-2575-http-server-method-not-found-404-ping',
          'sep-2575-http-server-method-not-found-404-resources-subscribe',
          'sep-2575-http-server-method-not-found-404-resources-unsubscribe',
          'sep-2575-http-server-unsupported-version-400',
          'sep-2575-request-meta-client-info-optional',
          'sep-2575-request-meta-invalid-missing-client-capabilities',
          'sep-2575-request-meta-invalid-missing-meta',
          'sep-2575-request-meta-invalid-missing-protocol-version',
          'sep-2575-server-declares-prompts-in-discover',
          'sep-2575-server-honors-notification-filter',
          'sep-2575-server-identifies-in-result-meta',
          'sep-2575-server-implements-discover',
          'sep-2575-server-sends-subscription-ack',
          'sep-2575-server-tags-subscription-id',
          'sep-2575-server-unsupported-version-error',
        ],
      },
    },
    'tasks-capability-negotiation': {
      everything: { na: 'tasks' },
      proxy: { na: 'tasks', checks: ['wire-schema-valid'] },
      vrp: { na: 'tasks', checks: ['wire-schema-valid'] },
    },
    'tasks-dispatch-and-envelope': {
      everything: { na: 'tasks' },
      proxy: { na: 'tasks', checks: ['sep-2663-tasks-result-removed-method-not-found', 'tasks-removed-tasks-list', 'wire-schema-valid'] },
      vrp: { na: 'tasks', checks: ['sep-2663-tasks-result-removed-method-not-found', 'tasks-removed-tasks-list', 'wire-schema-valid'] },
    },
    'tasks-lifecycle': {
      everything: { na: 'tasks' },
      proxy: { na: 'tasks', checks: ['wire-schema-valid'] },
      vrp: { na: 'tasks', checks: ['wire-schema-valid'] },
    },
    'tasks-mrtr-composition': {
      everything: { na: 'tasks' },
      proxy: { na: 'tasks', checks: ['wire-schema-valid'] },
      vrp: { na: 'tasks', checks: ['wire-schema-valid'] },
    },
    'tasks-mrtr-input': {
      everything: { na: 'tasks' },
      proxy: { na: 'tasks', checks: ['wire-schema-valid'] },
      vrp: { na: 'tasks', checks: ['wire-schema-valid'] },
    },
    'tasks-request-headers': {
      everything: { na: 'tasks' },
      proxy: { na: 'tasks', checks: ['tasks-headers-reject-mismatched-method', 'wire-schema-valid'] },
      vrp: { na: 'tasks', checks: ['tasks-headers-reject-mismatched-method', 'wire-schema-valid'] },
    },
    'tasks-request-state-removal': {
      everything: { na: 'tasks' },
      proxy: { na: 'tasks', checks: ['wire-schema-valid'] },
      vrp: { na: 'tasks', checks: ['wire-schema-valid'] },
    },
    'tasks-required-task-error': {
      everything: { na: 'tasks' },
      proxy: { na: 'tasks', checks: ['wire-schema-valid'] },
      vrp: { na: 'tasks', checks: ['wire-schema-valid'] },
    },
    'tasks-status-notifications': { everything: { na: 'tasks' }, proxy: { na: 'tasks' }, vrp: { na: 'tasks' } },
    'tasks-wire-fields': {
      everything: { na: 'tasks' },
      proxy: { na: 'tasks', checks: ['wire-schema-valid'] },
      vrp: { na: 'tasks', checks: ['wire-schema-valid'] },
    },
    'tools-call-audio': {
      everything: { na: 'everything2025' },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'tools-call-embedded-resource': {
      everything: { na: 'everything2025' },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'tools-call-error': {
      everything: { na: 'everything2025' },
      proxy: { na: 'unpinned', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'tools-call-image': {
      everything: { na: 'everything2025' },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'tools-call-mixed-content': {
      everything: { na: 'everything2025' },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'tools-call-simple-text': {
      everything: { na: 'everything2025' },
      proxy: { na: 'unpinned', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'tools-call-with-progress': {
      everything: { na: 'everything2025' },
      proxy: { na: 'fixture', checks: ['wire-schema-valid'] },
      vrp: { na: 'oneTool', checks: ['wire-schema-valid'] },
    },
    'tools-list': { everything: { na: 'everything2025' }, proxy: 'pass', vrp: 'pass' },
  },
};

/**
 * Why a client scenario is not applicable or fails through the gate proxy's downstream client
 * (interop-conformance-client.test.ts runs each through `vrp gate proxy --upstream`).
 */
export const CLIENT_REASONS = {} as const;
export type ClientReason = keyof typeof CLIENT_REASONS;
export type ClientExpectation = 'pass' | { na: ClientReason; checks?: string[] } | { fails: ClientReason; checks?: string[] };

/** The OAuth client scenarios of each revision: the proxy's downstream OAuth (support/conformance-auth-client.mjs runs them). */
const AUTH_2025 = [
  'auth/basic-cimd',
  'auth/metadata-default',
  'auth/metadata-var1',
  'auth/metadata-var2',
  'auth/metadata-var3',
  'auth/pre-registration',
  'auth/scope-from-scopes-supported',
  'auth/scope-from-www-authenticate',
  'auth/scope-omitted-when-undefined',
  'auth/scope-retry-limit',
  'auth/scope-step-up',
  'auth/token-endpoint-auth-basic',
  'auth/token-endpoint-auth-none',
  'auth/token-endpoint-auth-post',
];
const AUTH_2026 = [
  ...AUTH_2025,
  'auth/authorization-server-migration',
  'auth/iss-normalized',
  'auth/iss-not-advertised',
  'auth/iss-supported',
  'auth/iss-supported-missing',
  'auth/iss-unexpected',
  'auth/iss-wrong-issuer',
  'auth/metadata-issuer-mismatch',
  'auth/offline-access-not-supported',
  'auth/offline-access-scope',
  'auth/resource-mismatch',
];
const passing = (names: string[]): Record<string, ClientExpectation> => Object.fromEntries(names.map((n) => [n, 'pass' as const]));

/** Per revision, each CLIENT scenario the suite lists, through the proxy's downstream client. */
export const CLIENT_EXPECTED: Record<Revision, Record<string, ClientExpectation>> = {
  '2025-11-25': {
    initialize: 'pass',
    tools_call: 'pass',
    'elicitation-sep1034-client-defaults': 'pass',
    'sse-retry': 'pass',
    'json-schema-2020-12-preservation': 'pass',
    ...passing(AUTH_2025),
  },
  '2026-07-28': {
    tools_call: 'pass',
    'request-metadata': 'pass',
    'sep-2322-client-request-state': 'pass',
    'http-standard-headers': 'pass',
    'http-custom-headers': 'pass',
    'http-invalid-tool-headers': 'pass',
    'json-schema-ref-no-deref': 'pass',
    'json-schema-2020-12-preservation': 'pass',
    ...passing(AUTH_2026),
  },
};

function cell(e: Expectation | ClientExpectation): string {
  if (e === 'pass') return 'pass';
  const [kind, reason] = 'na' in e ? ['n.a.', e.na] : ['**fails**', e.fails];
  const checks = e.checks?.length ? `; passes ${e.checks.map((c) => `\`${c}\``).join(', ')}` : '';
  return `${kind} [${reason}]${checks}`;
}

/** The table docs/conformance.md shows: per revision, one row per scenario, then the reasons. */
export function renderConformanceTable(): string {
  const lines: string[] = [];
  for (const [revision, rows] of Object.entries(EXPECTED)) {
    lines.push(`#### ${revision}`, '', `| scenario | ${CONFORMANCE_COLUMNS.map((c) => COLUMN_TITLES[c]).join(' | ')} |`);
    lines.push(`| --- | ${CONFORMANCE_COLUMNS.map(() => '---').join(' | ')} |`);
    for (const [scenario, row] of Object.entries(rows))
      lines.push(`| ${scenario} | ${CONFORMANCE_COLUMNS.map((c) => cell(row[c])).join(' | ')} |`);
    lines.push('');
  }
  lines.push('Reasons:', '');
  for (const [key, text] of Object.entries(REASONS)) lines.push(`- \`${key}\`: ${text}`);
  lines.push('', "#### Client scenarios through the gate proxy's downstream client", '');
  lines.push(`| scenario | ${REVISIONS.join(' | ')} |`, `| --- | ${REVISIONS.map(() => '---').join(' | ')} |`);
  const scenarios = [...new Set(REVISIONS.flatMap((r) => Object.keys(CLIENT_EXPECTED[r])))];
  for (const scenario of scenarios)
    lines.push(
      `| ${scenario} | ${REVISIONS.map((r) => (CLIENT_EXPECTED[r][scenario] ? cell(CLIENT_EXPECTED[r][scenario]) : '—')).join(' | ')} |`,
    );
  const reasons = Object.entries(CLIENT_REASONS);
  if (reasons.length > 0) lines.push('', 'Reasons:', '');
  for (const [key, text] of reasons) lines.push(`- \`${key}\`: ${text}`);
  return `${lines.join('\n')}\n`;
}
