/**
 * A cooperating sink (Tool-Use Binding draft, MCP mapping: "On deny the client MUST NOT send
 * tools/call, or MUST send it only to a server that is itself a cooperating sink and will refuse"):
 * a server that receives the gate's signed authority with each call and checks it again before any
 * effect — signature against the gate's keys, the gate's sink, expiry, the tool, its own identity as
 * the destination, the digest of the arguments it actually received — and spends it once, durably,
 * on its own side (a replayed authority is refused even if the gate's store were bypassed).
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { type Clock, type Ed25519PublicJwk, systemClock } from '@vrpkit/core';
import Database from 'better-sqlite3';
import { digestArguments } from './act.js';
import { type AgentFinalityAuthority, AUTHORITY_HEADER, AUTHORITY_META_KEY, verifyAuthority } from './authority.js';
import { type EfCode, GateError, hostErrorObject } from './errors.js';
import { effectiveMethod, httpRequestArgs } from './vendors/fetch/handle.js';

/** The server side's own single-use record of the authorities it accepted. */
export interface ReplayGuard {
  /**
   * Record the authority as spent: true the first time, false ever after. `now` is the verifier's
   * clock reading the authority's expiry was checked against: a guard may forget an authority only
   * once it expired by that clock (issue 36 defect 20: one clock, never the guard's own).
   */
  consume(authorityId: string, expiresAt: number, now: number): boolean | Promise<boolean>;
  close?(): void;
}

/**
 * A durable replay guard in a SQLite file: one conditional insert per call (the primary key is the
 * authority id), in WAL mode with synchronous FULL, so an accepted authority stays spent across a
 * crash. Rows are purged as new ones arrive, only those expired by the verifier's clock (`now`), which
 * refuses them as expired anyway.
 */
export function openSqliteReplayGuard(file: string): ReplayGuard {
  mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE IF NOT EXISTS spent_authority (authority_id TEXT PRIMARY KEY, expires_at INTEGER NOT NULL) WITHOUT ROWID');
  const insert = db.prepare('INSERT OR IGNORE INTO spent_authority (authority_id, expires_at) VALUES (?, ?)');
  // verifyAuthority refuses `expires_at <= now`: exactly these rows may go.
  const purge = db.prepare('DELETE FROM spent_authority WHERE expires_at <= ?');
  let n = 0;
  return {
    consume(authorityId, expiresAt, now) {
      if (++n % 1000 === 0) purge.run(now);
      return insert.run(authorityId, expiresAt).changes === 1;
    },
    close: () => db.close(),
  };
}

export interface CooperatingSinkOptions {
  /** The gate's public keys (its JWKS `keys`). */
  keys: readonly Ed25519PublicJwk[];
  /** The sink id of the gate whose authority this server accepts (the authority's `sink_id`). */
  gateSinkId: string;
  /** This server's identity as the gate binds it: the MCP server URL, or the HTTP origin. */
  destination: string;
  replay: ReplayGuard;
  clock?: Clock;
}

export type ForwardedAuthorityResult = { ok: true; authority: AgentFinalityAuthority } | { ok: false; code: EfCode; reason: string };

/** Check the authority that came with one call, and spend it. Never throws for a bad authority. */
export async function verifyForwardedAuthority(
  jws: unknown,
  call: { tool: string; function?: string; arguments: unknown },
  opts: CooperatingSinkOptions,
): Promise<ForwardedAuthorityResult> {
  const fail = (code: EfCode, reason: string): ForwardedAuthorityResult => ({ ok: false, code, reason });
  if (typeof jws !== 'string' || !jws) return fail('EF_002', 'no authority came with the call');
  const now = (opts.clock ?? systemClock).now();
  const v = verifyAuthority(jws, { keys: opts.keys, sinkId: opts.gateSinkId, now });
  if (!v.ok) return v;
  const a = v.authority;
  if (a.tool.tool_id !== call.tool || (call.function !== undefined && a.tool.function_id !== call.function))
    return fail('EF_SCOPE_MISMATCH', 'authority issued for another tool');
  if (a.destination_id !== opts.destination && a.tool.tool_endpoint !== opts.destination)
    return fail('EF_DESTINATION_MISMATCH', 'authority issued for another destination');
  let live: string;
  try {
    live = digestArguments(call.arguments).value;
  } catch (e) {
    return fail(e instanceof GateError ? e.code : 'EF_MALFORMED_ARGUMENTS', 'arguments are not I-JSON');
  }
  if (live !== a.arguments_digest.value) return fail('EF_SCOPE_MISMATCH', 'arguments differ from the authorized digest');
  try {
    if (!(await opts.replay.consume(a.authority_id, Date.parse(a.expires_at), now))) return fail('EF_005', 'authority already spent here');
  } catch {
    return fail('EF_STORE_UNAVAILABLE', 'the replay guard is unavailable');
  }
  return { ok: true, authority: a };
}

/**
 * What an SDK tool callback receives beside its arguments: SDK v2's context (`ctx.mcpReq._meta`,
 * on either revision) or SDK v1's `extra` (`extra._meta`).
 */
type ToolCallbackContext = { mcpReq?: { _meta?: Record<string, unknown> }; _meta?: Record<string, unknown> };

/**
 * The request's `_meta` where the SDK puts it: v2 moved it from `extra._meta` to
 * `ctx.mcpReq._meta` (the v1-to-v2 codemod compiles and then finds no authority at run time).
 */
function requestMeta(ctx: ToolCallbackContext | undefined): Record<string, unknown> | undefined {
  return ctx?.mcpReq ? ctx.mcpReq._meta : ctx?._meta;
}

/**
 * Wrap an MCP tool callback of a server built on the official SDK (v2 `McpServer.registerTool`, or
 * v1's): the callback runs only when the request's `_meta` carries an authority that verifies for
 * this tool, this server and exactly these arguments; otherwise the caller gets an MCP tool error
 * carrying the host error object and nothing happens.
 */
export function requireAuthority<A extends Record<string, unknown>, E extends ToolCallbackContext, R>(
  toolName: string,
  opts: CooperatingSinkOptions,
  callback: (args: A, ctx: E) => R | Promise<R>,
) {
  return async (args: A, ctx: E) => {
    const v = await verifyForwardedAuthority(requestMeta(ctx)?.[AUTHORITY_META_KEY], { tool: toolName, arguments: args ?? {} }, opts);
    if (!v.ok) {
      const body = hostErrorObject({ allow: false, code: v.code });
      return { isError: true, content: [{ type: 'text' as const, text: JSON.stringify(body) }] };
    }
    return callback(args, ctx);
  };
}

/**
 * For an HTTP server behind the fetch wrapper: check the `Agent-Finality-Authority` header of a
 * request against its method, URL and body (the request body is read; pass a clone if the handler
 * needs it). Forwarding headers (`Forwarded`, `X-Forwarded-*`, `X-Real-IP`) are not part of the
 * check: the gate strips them from what it sends, so any that arrive were added after it. `toolId` is the gate's tool id for these requests (default `http_request`).
 */
export async function verifyForwardedRequest(
  request: Request,
  opts: CooperatingSinkOptions & { toolId?: string },
): Promise<ForwardedAuthorityResult> {
  const { args } = await httpRequestArgs(request);
  return verifyForwardedAuthority(
    request.headers.get(AUTHORITY_HEADER),
    // The gate's act names the method the server acts as (a method override included).
    { tool: opts.toolId ?? 'http_request', function: effectiveMethod(request), arguments: args },
    opts,
  );
}
