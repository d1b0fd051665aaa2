/**
 * The `webmcp` surface (Node Tool Binding v0.1 §3–§6): the property page (page.ts), whose script
 * (script.ts) registers `get_verified_stay_offer` with the browser's model context, and the JSON
 * POST the tool's `execute()` sends on the node's own origin, parsed exactly as MCP and A2A
 * arguments. Its result is the endpoint's envelope, byte for byte (§5); a refusal is
 * `{error:{code,message}}`.
 */
import { PROPERTY_PAGE_PATH, WEBMCP_TOOL_CALL_PATH } from '@vrpkit/protocol';
import type { Hono } from 'hono';
import { readBodyCapped } from '../../http/body.js';
import { HTML_SECURITY_HEADERS } from '../../http/html.js';
import { errorResponse, offerResponse } from '../../http/json.js';
import { offerFor } from '../../service/index.js';
import type { ServiceOf } from '../types.js';
import { renderPropertyPage } from './page.js';
import { WEBMCP_SCRIPT, WEBMCP_SCRIPT_PATH } from './script.js';

/** A tool input is three short arguments; the same cap as the MCP and A2A bodies. */
const WEBMCP_MAX_BODY_BYTES = 64 * 1024;

export function mountWebMcp(app: Hono, serviceOf: ServiceOf): void {
  app.get(PROPERTY_PAGE_PATH, async (c) =>
    c.html(await renderPropertyPage(serviceOf(c)), 200, { ...HTML_SECURITY_HEADERS, 'cache-control': 'no-store' }),
  );
  app.post(WEBMCP_TOOL_CALL_PATH, async (c) => {
    const noStore = { 'cache-control': 'no-store' };
    const mediaType = c.req.header('content-type')?.split(';', 1)[0]?.trim().toLowerCase();
    if (mediaType !== 'application/json') return errorResponse('unsupported_media_type', { what: 'tool input' }, noStore);
    const read = await readBodyCapped(c, WEBMCP_MAX_BODY_BYTES);
    if (!read.ok) return errorResponse('body_too_large', { what: 'tool input', max: WEBMCP_MAX_BODY_BYTES }, noStore);
    let input: unknown;
    try {
      input = JSON.parse(read.text);
    } catch {
      return offerResponse({ ok: false, error: { code: 'invalid_arguments', message: 'the tool input is not JSON' } });
    }
    // Anything but one JSON object is the parser's invalid_arguments, as on MCP and A2A.
    return offerResponse(await offerFor(serviceOf(c), input));
  });
  app.get(WEBMCP_SCRIPT_PATH, (c) =>
    c.body(WEBMCP_SCRIPT, 200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=300' }),
  );
}
