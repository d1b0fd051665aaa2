/**
 * The feed address policy of platform mode: a tenant's property file names its calendar feeds,
 * so a feed URL is tenant input, and the sync worker fetching it runs inside the operator's
 * network. Without a policy any tenant could make the workers send requests to the operator's
 * loopback services, private networks or the cloud metadata endpoint (blind server-side request
 * forgery). The workers therefore connect only to public addresses: the check runs on the
 * address the connection is actually made to (the DNS answer handed to the socket by `lookup`,
 * or the literal address in the URL), so a name that resolves to a public address when checked
 * and to a private one when connecting cannot slip through. Feeds are fetched without following
 * redirects (the node's fetch accepts status 200 only), so a redirect never reaches a second address.
 */
import { type LookupAddress, type LookupAllOptions, type LookupOptions, lookup } from 'node:dns';
import { Agent, type RequestOptions } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import type { Duplex } from 'node:stream';
import { NodeError } from '@vrpkit/node';
import ipaddr from 'ipaddr.js';

/** Networks a feed is never fetched from: loopback, private, link-local, shared, reserved, documentation and multicast ranges. */
const REFUSED_NETWORKS: [string, number, 'ipv4' | 'ipv6'][] = [
  ['0.0.0.0', 8, 'ipv4'], // "this network" (0.0.0.0 reaches the local host)
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'], // carrier-grade NAT, shared address space
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['192.0.2.0', 24, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['198.51.100.0', 24, 'ipv4'],
  ['203.0.113.0', 24, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'], // multicast
  ['240.0.0.0', 4, 'ipv4'], // reserved, broadcast
  ['::', 128, 'ipv6'],
  ['::1', 128, 'ipv6'],
  ['64:ff9b:1::', 48, 'ipv6'], // local-use NAT64
  ['100::', 64, 'ipv6'], // discard-only
  ['2001:db8::', 32, 'ipv6'],
  ['fc00::', 7, 'ipv6'], // unique local
  ['fe80::', 10, 'ipv6'], // link-local
  ['fec0::', 10, 'ipv6'], // site-local (deprecated, still routed by some stacks)
  ['ff00::', 8, 'ipv6'], // multicast
];
const refused = new BlockList();
for (const [net, prefix, family] of REFUSED_NETWORKS) refused.addSubnet(net, prefix, family);

/**
 * The IPv4 address an IPv6 address carries to an IPv4 host, if it is one of the forms that do
 * (issue 36 defect 8: each is judged as the IPv4 address it reaches):
 * IPv4-mapped (::ffff:a.b.c.d, RFC 4291 §2.5.5.2), IPv4-translated (::ffff:0:a.b.c.d, RFC 7915
 * via RFC 6145's prefix), IPv4-compatible (::a.b.c.d, RFC 4291 §2.5.5.1, deprecated; not :: or ::1),
 * NAT64's well-known prefix (64:ff9b::a.b.c.d, RFC 6052), 6to4 (2002:AABB:CCDD::, RFC 3056) and
 * Teredo (2001::/32, RFC 4380: the client's address, stored inverted in the last 32 bits).
 * Parsed by ipaddr.js, never by hand.
 */
function embeddedIpv4(v6: ipaddr.IPv6): string | undefined {
  const g = v6.parts;
  const dotted = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  switch (v6.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return dotted(g[6]!, g[7]!);
    case 'rfc6052':
      // Only the /96 well-known prefix puts the address in the last 32 bits; the local-use /48 (RFC 8215) is refused as a network.
      return g[2] === 0 ? dotted(g[6]!, g[7]!) : undefined;
    case '6to4':
      return dotted(g[1]!, g[2]!);
    case 'teredo':
      return dotted(g[6]! ^ 0xffff, g[7]! ^ 0xffff);
    default:
      return g.slice(0, 6).every((x) => x === 0) && (g[6] !== 0 || g[7]! > 1) ? dotted(g[6]!, g[7]!) : undefined;
  }
}

/** True when a feed must not be fetched from `address` (an IPv4 or IPv6 literal); anything that is not an IP address is refused too. */
export function isRefusedFeedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return refused.check(address, 'ipv4');
  if (family !== 6) return true;
  const v6 = ipaddr.IPv6.parse(address.split('%')[0]!);
  const v4 = embeddedIpv4(v6);
  if (v4 !== undefined) return refused.check(v4, 'ipv4');
  return refused.check(v6.toNormalizedString(), 'ipv6');
}

function addressRefused(host: string): NodeError {
  return new NodeError('feed_address_refused', { host: host.slice(0, 253) });
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for the socket: the name is resolved once, every address of the answer is checked,
 * and the socket connects to what was checked. Any refused address refuses the whole name (a
 * name with one private address is not fetched, whichever address the connection would pick).
 */
function checkedLookup(isRefused: (address: string) => boolean): LookupFunction {
  return (hostname: string, options: LookupOptions, callback: LookupCallback) => {
    const all: LookupAllOptions = { ...options, all: true };
    lookup(hostname, all, (err, addresses) => {
      if (err) return callback(err, []);
      if (addresses.length === 0 || addresses.some((a) => isRefused(a.address))) return callback(addressRefused(hostname), []);
      if (options.all) return callback(null, addresses);
      const [first] = addresses as [LookupAddress];
      callback(null, first.address, first.family);
    });
  };
}

/**
 * An https agent whose connections go to public addresses only: a literal address in the URL is
 * checked here (the socket does no lookup for it), a name by the socket's lookup. The refusal
 * reaches the request as its error (`feed_address_refused`), so the feed's sync fails and is
 * recorded like any other failure. `isRefused` is the policy (default `isRefusedFeedAddress`).
 */
export class PublicFeedAgent extends Agent {
  private readonly isRefused: (address: string) => boolean;
  private readonly checked: LookupFunction;

  constructor(o: { isRefused?: (address: string) => boolean } = {}) {
    super();
    this.isRefused = o.isRefused ?? isRefusedFeedAddress;
    this.checked = checkedLookup(this.isRefused);
  }

  override createConnection(options: RequestOptions, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    const host = options.host ?? options.hostname ?? '';
    if (isIP(host) === 0) return super.createConnection({ ...options, lookup: this.checked }, callback);
    if (!this.isRefused(host)) return super.createConnection(options, callback);
    callback?.(addressRefused(host), undefined as unknown as Duplex);
    return undefined;
  }
}
