/**
 * The feed address policy's classification: which addresses a sync worker never fetches a
 * tenant's feed from (the connection-time check itself runs in sync-worker.test.ts, against real
 * feed servers on 127.0.0.1 and `localhost`).
 */
import { isRefusedFeedAddress } from '@vrpkit/platform';
import { describe, expect, it } from 'vitest';

describe('isRefusedFeedAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback /8'],
    ['0.0.0.0', 'this host'],
    ['10.1.2.3', 'RFC 1918'],
    ['172.16.0.1', 'RFC 1918'],
    ['172.31.255.254', 'RFC 1918'],
    ['192.168.1.1', 'RFC 1918'],
    ['169.254.169.254', 'cloud metadata, link-local'],
    ['100.64.0.1', 'shared address space'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'IPv6 loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'unique local'],
    ['fd12:3456::1', 'unique local'],
    ['fe80::1%eth0', 'link-local with a zone'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped metadata'],
    ['::7f00:1', 'IPv4-compatible loopback'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 of the metadata address'],
    ['2002:c0a8:101::1', '6to4 of 192.168.1.1'],
    // Issue 36 defect 8 (regression): IPv4-translated (RFC 7915) and Teredo carry an IPv4 address too.
    ['::ffff:0:7f00:1', 'IPv4-translated loopback'],
    ['::ffff:0:a9fe:a9fe', 'IPv4-translated metadata'],
    ['::ffff:0:10.0.0.1', 'IPv4-translated RFC 1918, dotted'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'Teredo of 127.0.0.1'],
    ['64:ff9b:1::a9fe:a9fe', 'local-use NAT64'],
    ['localhost', 'not an address'],
  ])('refuses %s (%s)', (address) => {
    expect(isRefusedFeedAddress(address)).toBe(true);
  });

  it.each([
    ['93.184.215.14', 'public IPv4'],
    ['172.32.0.1', 'just past 172.16/12'],
    ['8.8.8.8', 'public IPv4'],
    ['2606:4700:4700::1111', 'public IPv6'],
    ['::ffff:8.8.8.8', 'IPv4-mapped public'],
    ['64:ff9b::808:808', 'NAT64 of a public address (an IPv6-only host reaching an IPv4 feed)'],
    ['::ffff:0:808:808', 'IPv4-translated public'],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'Teredo of 8.8.8.8'],
  ])('allows %s (%s)', (address) => {
    expect(isRefusedFeedAddress(address)).toBe(false);
  });
});
