import { DNS_LABEL } from '../dns-name.js';
import { nodeMessage } from '../errors.js';
import { errorBody, JSON_TYPE } from './json.js';

/**
 * 421 Misdirected Request (RFC 9110 §15.5.20) for a request whose `Host` is neither the canonical
 * domain nor a subdomain of it, before any handler runs, so no node data reaches it; undefined
 * for a request the node serves. Core VRP v0.1 §2: a node speaks only for its canonical domain.
 * It also shields a node on a local user's machine from DNS rebinding (a page whose name was
 * re-pointed at 127.0.0.1 sends its own Host).
 */
export function canonicalHostOnly(domain: string): (req: Request) => Response | undefined {
  const body = errorBody('misdirected_request', nodeMessage('misdirected_request', { domain }));
  return (req) => {
    const host = requestHostName(req.headers.get('host'));
    if (host === domain || host?.endsWith(`.${domain}`)) return undefined;
    return new Response(body, { status: 421, headers: { 'content-type': JSON_TYPE } });
  };
}

/**
 * The DNS name a `Host` header names (lowercased; port and trailing dot removed), or undefined when
 * it names none: every label a DNS label (`DNS_LABEL`, any case), so `.a.example`
 * or `x..a.example` is no name at all rather than a subdomain of `a.example`.
 */
export function requestHostName(header: string | null | undefined): string | undefined {
  const m = HOST.exec(header?.trim() ?? '');
  return m?.[1]?.toLowerCase();
}

const HOST = new RegExp(`^(${DNS_LABEL}(?:\\.${DNS_LABEL})*)\\.?(?::\\d{1,5})?$`, 'i');
