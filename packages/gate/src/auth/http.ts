/**
 * The resource server at the HTTP edge, on web `Request`/`Response` (the listener's own types):
 * serves the Protected Resource Metadata document and turns a refused token into its 401/403/503
 * with the `WWW-Authenticate` challenge, before anything reaches the MCP layer.
 */
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { ConsequenceClass } from '../act.js';
import type { AuthRefusal, Principal, ResourceServer } from './resource-server.js';

/** The RFC 9728 document when `request` asks for it (GET at the resource's well-known path), else undefined. */
export function protectedResourceMetadataResponse(rs: ResourceServer, request: Request): Response | undefined {
  if (new URL(request.url).pathname !== new URL(rs.metadataUrl).pathname) return undefined;
  if (request.method !== 'GET' && request.method !== 'HEAD') return new Response(null, { status: 405, headers: { allow: 'GET, HEAD' } });
  // Public metadata: a browser-based MCP client reads it cross-origin (RFC 9728 §3 sets no restriction).
  return Response.json(rs.metadata(), { headers: { 'cache-control': 'max-age=300', 'access-control-allow-origin': '*' } });
}

/**
 * The request's principal — also as the SDK's `AuthInfo`, which the MCP handler passes through to
 * every handler's context (`extra.principal`; the token stays in memory for token exchange and is
 * never logged) — or the refusal to send (a stable `code` in the JSON body; the token never echoed).
 */
export async function authenticateRequest(
  rs: ResourceServer,
  request: Request,
): Promise<{ ok: true; principal: Principal; authInfo: AuthInfo } | { ok: false; response: Response }> {
  const authorization = request.headers.get('authorization') ?? undefined;
  const result = await rs.authenticate(authorization);
  if (result.ok) {
    const { principal } = result;
    const authInfo: AuthInfo = {
      token: authorization?.replace(/^bearer +/i, '').trim() ?? '',
      clientId: principal.clientId ?? principal.subject,
      scopes: principal.scopes,
      resource: new URL(rs.config.resource),
      extra: { principal },
      ...(principal.expiresAt !== undefined ? { expiresAt: principal.expiresAt } : {}),
    };
    return { ok: true, principal, authInfo };
  }
  return { ok: false, response: refusalResponse(result) };
}

/** A refusal as sent: its status, its `WWW-Authenticate` challenge and its stable code in the JSON body. */
export function refusalResponse(refusal: AuthRefusal): Response {
  return Response.json(
    { error: refusal.code, message: refusal.message },
    { status: refusal.status, headers: { 'www-authenticate': refusal.challenge, 'cache-control': 'no-store' } },
  );
}

/**
 * The tool a JSON-RPC `tools/call` request names, on either revision (the body the listener
 * parsed; on 2026-07-28 the SDK then checks the `Mcp-Name` header against it), or undefined.
 */
export function calledTool(message: unknown): string | undefined {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined;
  const m = message as { method?: unknown; params?: { name?: unknown } };
  return m.method === 'tools/call' && typeof m.params?.name === 'string' ? m.params.name : undefined;
}

/**
 * Scopes per tool class (issue 33 item 1), at the HTTP edge so the answer can be the 403 step-up
 * challenge the MCP authorization spec describes ("Scope Challenge Handling"): the tool's class
 * as the caller's policy member gives it, the scopes the resource asks for that class, and the
 * refusal when the token lacks one. Nothing reaches the MCP layer, the gate or the downstream.
 */
export function toolScopeRefusal(
  rs: ResourceServer,
  principal: Principal,
  tool: string,
  classify: (principal: Principal, tool: string) => ConsequenceClass,
): Response | undefined {
  if (!rs.config.classScopes) return undefined;
  const missing = rs.missingForClass(principal, classify(principal, tool));
  return missing.length ? refusalResponse(rs.insufficientScope(missing)) : undefined;
}
