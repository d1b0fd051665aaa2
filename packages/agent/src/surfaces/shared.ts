import { BOUND_TOOL_NAME } from '@vrpkit/protocol';
import { type AgentCode, AgentUsageError } from '../errors.js';
import type { ListedTool, SurfaceError, SurfaceFetch } from './types.js';

/**
 * Node Tool Binding v0.1 §3, §10.1: the capability is the one tool listed under exactly the bound
 * name — `acme_get_verified_stay_offer` or `get_verified_stay_offer_v1` is not it, and two
 * entries under the name are not "exactly one". Null means: do not call anything.
 */
export function boundToolName(tools: readonly ListedTool[]): typeof BOUND_TOOL_NAME | null {
  return tools.filter((t) => t.name === BOUND_TOOL_NAME).length === 1 ? BOUND_TOOL_NAME : null;
}

/**
 * The surface URL for `target`: an origin (`https://villa.example`) gets the surface's
 * conventional path; a URL with a path is taken as given.
 */
export function surfaceUrl(target: string, defaultPath: string): URL {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new AgentUsageError('invalid_target', { what: 'an absolute URL', target });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new AgentUsageError('invalid_target', { what: 'an http(s) URL', target });
  if (url.pathname === '/' && !url.search) url.pathname = defaultPath;
  return url;
}

/** A thrown value as a report error with a stable code (the thrower's own code when it has one). */
export function errorOf(e: unknown, fallbackCode: AgentCode): SurfaceError {
  const code = (e as { code?: unknown })?.code;
  const message = e instanceof Error ? e.message : String(e);
  return { code: typeof code === 'string' && /^[a-z][a-z0-9_]*$/.test(code) ? code : fallbackCode, message: message.slice(0, 500) };
}

/** A surface that could not be read at all: nothing listed, nothing called, the failure as a coded error. */
export function unreachableSurface(url: URL, e: unknown, fallbackCode: AgentCode): SurfaceFetch {
  return {
    surface_url: url.href,
    served_from: [url.hostname],
    reached: false,
    tools: [],
    tool_name: null,
    envelope: null,
    error: errorOf(e, fallbackCode),
  };
}
