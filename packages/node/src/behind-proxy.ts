/**
 * `vrp node serve --behind-proxy`: plain http on a loopback or private address, for a reverse
 * proxy that terminates TLS for `https://{domain}`. The public origin stays `https://{domain}`
 * (Core VRP v0.1 §2: the documents never name the listening address); what the proxy says about
 * the original request (`X-Forwarded-Proto`, `X-Forwarded-Host`) is believed only from the
 * addresses the host lists as its proxies, and removed from every other request before any
 * handler sees it, so a client cannot claim it arrived over https or for another host.
 */
import { BlockList, isIP } from 'node:net';
import { NodeError, nodeMessage } from './errors.js';
import { errorBody, JSON_TYPE } from './http/json.js';

/** `X-Forwarded-*` headers, as de-facto standardised by reverse proxies (RFC 7239 §1 describes them). */
const FORWARDED_HEADERS = ['x-forwarded-proto', 'x-forwarded-host', 'x-forwarded-for', 'x-forwarded-port', 'forwarded'] as const;

/** Addresses a plain-http listener may use: loopback and private networks (RFC 1918, RFC 4193), never a public one. */
const PRIVATE_NETWORKS: Array<[string, number, 'ipv4' | 'ipv6']> = [
  ['127.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['::1', 128, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
];

function familyOf(address: string): 'ipv4' | 'ipv6' | null {
  const v = isIP(address);
  return v === 4 ? 'ipv4' : v === 6 ? 'ipv6' : null;
}

/** A peer address as the socket reports it; an IPv4-mapped IPv6 address is its IPv4 address. */
function peer(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/** True when `host` (a `--host` value) is a loopback or private address (`localhost` included). */
export function isPrivateListenAddress(host: string): boolean {
  if (host === 'localhost') return true;
  const address = peer(host);
  const family = familyOf(address);
  if (!family) return false;
  const list = new BlockList();
  for (const [net, prefix, f] of PRIVATE_NETWORKS) list.addSubnet(net, prefix, f);
  return list.check(address, family);
}

/** Parse `--trusted-proxy` values (an address or `address/prefix`, IPv4 or IPv6) into one list. */
export function trustedProxyList(cidrs: readonly string[]): BlockList {
  if (cidrs.length === 0) throw new NodeError('trusted_proxy_required');
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [address = '', prefixText, extra] = cidr.split('/');
    const family = familyOf(address);
    const max = family === 'ipv4' ? 32 : 128;
    const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : Number.NaN;
    if (!family || extra !== undefined || !(prefix >= 0 && prefix <= max))
      throw new NodeError('invalid_trusted_proxy', { value: cidr.slice(0, 80) });
    list.addSubnet(address, prefix, family);
  }
  return list;
}

/** What a request reaches the app with behind a proxy, beside the socket: the client the trusted proxy forwarded for. */
export interface ForwardedClientBindings {
  forwardedClient?: string;
}

/**
 * The client a trusted proxy forwarded for: the rightmost `X-Forwarded-For` entry that is not
 * itself a trusted proxy (each proxy appends the address it received the request from, so entries
 * left of the last untrusted one are the client's own claims). Absent or unreadable: undefined.
 */
function forwardedClient(header: string | null, trusted: BlockList): string | undefined {
  if (!header) return undefined;
  const hops = header.split(',').map((h) => peer(h.trim()));
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i] as string;
    const family = familyOf(hop);
    if (!family) return undefined;
    if (i === 0 || !trusted.check(hop, family)) return hop;
  }
  return undefined;
}

/**
 * The request as the node should see it, with the client's address (booking limits key on it)
 * and whether a trusted proxy sent it (the console behind the proxy answers only those). From a trusted proxy, `X-Forwarded-Proto: http` (the
 * proxy passed a plain-http request through) is answered with a redirect to the https origin,
 * and an `X-Forwarded-Host` outside the canonical domain is 421 (the proxy routed another site
 * here); from anyone else every forwarded header is removed.
 */
export function forwardedRequest(
  req: Request,
  remoteAddress: string | undefined,
  trusted: BlockList,
  domain: string,
): { request: Request; client: string | undefined; proxied: boolean } | { response: Response } {
  const address = remoteAddress ? peer(remoteAddress) : '';
  const family = familyOf(address);
  if (family && trusted.check(address, family)) {
    const proto = req.headers.get('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
    const host = req.headers.get('x-forwarded-host')?.split(',')[0]?.trim().toLowerCase().replace(/:443$/, '');
    const url = new URL(req.url);
    if (host !== undefined && host !== domain && !host.endsWith(`.${domain}`)) {
      const body = errorBody('misdirected_request', nodeMessage('misdirected_request', { domain }));
      return { response: new Response(body, { status: 421, headers: { 'content-type': JSON_TYPE } }) };
    }
    if (proto === 'http') {
      return {
        response: new Response(null, { status: 308, headers: { location: `https://${host ?? domain}${url.pathname}${url.search}` } }),
      };
    }
    return {
      request: req,
      client: forwardedClient(req.headers.get('x-forwarded-for'), trusted) ?? (address || undefined),
      proxied: true,
    };
  }
  const client = address || undefined;
  if (!FORWARDED_HEADERS.some((h) => req.headers.has(h))) return { request: req, client, proxied: false };
  const headers = new Headers(req.headers);
  for (const h of FORWARDED_HEADERS) headers.delete(h);
  return { request: new Request(req, { headers }), client, proxied: false };
}
