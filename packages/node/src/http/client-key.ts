import ipaddr from 'ipaddr.js';

/**
 * The key every per-client limit counts a client address under (the booking rate limit and hold
 * cap, the per-client connection cap): an IPv4 address as itself (an IPv4-mapped IPv6 address as
 * its IPv4 address), an IPv6 address as its /64. A /64 is the smallest prefix an ISP assigns one
 * subscriber (RFC 6177, RFC 7421), so one host can use any of its 2^64 addresses; counted per
 * address, eight of them made eight holds with the cap at three (issue 36 defect 6). Anything
 * that is not an IP address (an unknown peer) is its own key.
 */
export function clientKey(address: string): string {
  const bare = address.split('%', 1)[0]!;
  if (!ipaddr.isValid(bare)) return address;
  const parsed = ipaddr.parse(bare);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  return `${v6.parts
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}
