/**
 * `clientKey`, the one key of every per-client limit (booking rate limit, hold cap, connection
 * cap): IPv6 by /64, IPv4 (and IPv4-mapped IPv6) by address (issue 36 defect 6).
 */
import { describe, expect, it } from 'vitest';
import { clientKey } from '../src/http/client-key.js';

describe('clientKey', () => {
  it('puts every address of one IPv6 /64 under one key, whatever its spelling', () => {
    const keys = ['2001:db8:1:2::a', '2001:DB8:1:2:ffff:ffff:ffff:ffff', '2001:0db8:0001:0002:0:0:0:1', 'fe80::1%eth0'].map(clientKey);
    expect(keys.slice(0, 3)).toEqual(['2001:db8:1:2::/64', '2001:db8:1:2::/64', '2001:db8:1:2::/64']);
    expect(keys[3]).toBe('fe80:0:0:0::/64');
    expect(clientKey('2001:db8:1:3::a')).not.toBe(keys[0]);
  });

  it('keeps IPv4 per address, an IPv4-mapped IPv6 address as its IPv4 address; anything else as given', () => {
    expect(clientKey('198.51.100.7')).toBe('198.51.100.7');
    expect(clientKey('::ffff:198.51.100.7')).toBe('198.51.100.7');
    expect(clientKey('198.51.100.8')).not.toBe(clientKey('198.51.100.7'));
    expect(clientKey('unknown')).toBe('unknown');
  });
});
