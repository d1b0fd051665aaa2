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

/** The 8 groups of an IPv6 address (a valid one: `isIP(a) === 6`), an embedded dotted quad included. */
function ipv6Groups(address: string): number[] {
  let text = address.split('%')[0]!.toLowerCase();
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (s: string | undefined) => (s ? s.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const h = parse(head);
  const t = parse(tail);
  return tail === undefined ? h : [...h, ...Array<number>(8 - h.length - t.length).fill(0), ...t];
}

const dotted = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * The IPv4 address an IPv6 address carries to an IPv4 host, if it is one of the forms that do:
 * IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d, RFC 6052)
 * and 6to4 (2002:AABB:CCDD::, RFC 3056). Such an address reaches the embedded one, so it is judged as that.
 */
function embeddedIpv4(address: string): string | undefined {
  const g = ipv6Groups(address);
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && (g[5] === 0xffff || (g[5] === 0 && (g[6] !== 0 || g[7]! > 1)))) return dotted(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return dotted(g[6]!, g[7]!);
  if (g[0] === 0x2002) return dotted(g[1]!, g[2]!);
  return undefined;
}

/** True when a feed must not be fetched from `address` (an IPv4 or IPv6 literal); anything that is not an IP address is refused too. */
export function isRefusedFeedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return refused.check(address, 'ipv4');
  if (family !== 6) return true;
  const v4 = embeddedIpv4(address);
  if (v4 !== undefined) return refused.check(v4, 'ipv4');
  return refused.check(address.split('%')[0]!, 'ipv6');
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
