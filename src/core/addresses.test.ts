import { describe, expect, it } from 'vitest';
import {
  addressListed,
  addressRefusal,
  canonicalAddress,
  isLoopbackAddress,
  restrictedAddressReason,
} from './addresses.ts';

describe('restricted addresses', () => {
  it.each([
    // loopback
    ['127.0.0.1', true],
    ['127.255.1.2', true],
    ['::1', true],
    ['[::1]', true],
    // unspecified: "this host" as a destination
    ['0.0.0.0', true],
    ['0.1.2.3', true],
    ['::', true],
    // link-local, cloud metadata
    ['169.254.169.254', true],
    ['fe80::1', true],
    ['fe80::1%eth0', true],
    ['fd00:ec2::254', true],
    // RFC 1918, CGNAT, ULA
    ['10.0.0.1', true],
    ['172.16.0.1', true],
    ['172.31.255.255', true],
    ['192.168.1.1', true],
    ['100.64.0.1', true],
    ['100.127.255.255', true],
    ['fc00::1', true],
    ['fdff:ffff::1', true],
    // IPv6 forms that embed one of those
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['::ffff:10.0.0.1', true],
    ['::ffff:a9fe:a9fe', true],
    ['::ffff:0:10.0.0.1', true],
    ['64:ff9b::a9fe:a9fe', true],
    ['::127.0.0.1', true],
    // multicast, documentation, reserved
    ['224.0.0.1', true],
    ['240.0.0.1', true],
    ['192.0.2.10', true],
    ['ff02::1', true],
    ['2001:db8::1', true],
    // ordinary public addresses
    ['8.8.8.8', false],
    ['100.63.255.255', false],
    ['100.128.0.1', false],
    ['172.15.255.255', false],
    ['172.32.0.1', false],
    ['169.253.0.1', false],
    ['2606:4700::1111', false],
    ['::ffff:8.8.8.8', false],
    ['fbff::1', false],
  ])('%s restricted: %s', (address, restricted) => {
    expect(restrictedAddressReason(address) !== undefined).toBe(restricted);
  });

  it('names metadata as link-local and says when a text is no address', () => {
    expect(restrictedAddressReason('169.254.169.254')).toMatch(/link-local.*metadata/);
    expect(restrictedAddressReason('::ffff:169.254.169.254')).toMatch(/link-local/);
    expect(restrictedAddressReason('example.com')).toMatch(/not an IP address/);
  });

  it.each([
    ['10.0.0.1', '10.0.0.1'],
    ['::ffff:10.0.0.1', '10.0.0.1'],
    ['::ffff:a00:1', '10.0.0.1'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['[FE80::0001]', 'fe80::1'],
    ['example.com', undefined],
  ])('one spelling: %s → %s', (address, canonical) => {
    expect(canonicalAddress(address)).toBe(canonical);
  });

  it.each([
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['10.0.0.1', false],
    ['::', false],
  ])('%s is loopback: %s', (address, loopback) => {
    expect(isLoopbackAddress(address)).toBe(loopback);
  });
});

describe('a name leads to a restricted address only when that address is listed itself', () => {
  const entries = [
    'api.example.com',
    'db.corp',
    '10.0.0.5:5432',
    '[fd00::7]',
    '192.168.1.9',
    'localhost:8080',
  ];
  it.each([
    // A public address is fine, whatever name led to it.
    ['93.184.216.34', 443, undefined],
    // An allowed name whose DNS answer is restricted: refused…
    ['127.0.0.1', 6379, /loopback/],
    ['::1', 22, /loopback/],
    ['::ffff:127.0.0.1', 22, /loopback/],
    ['169.254.169.254', 80, /metadata/],
    ['::ffff:169.254.169.254', 80, /metadata/],
    ['10.1.2.3', 80, /private/],
    ['100.64.0.1', 80, /private/],
    ['fd12::1', 80, /private/],
    ['0.0.0.0', 80, /unspecified/],
    ['::', 80, /unspecified/],
    ['::ffff:0.0.0.0', 80, /unspecified/],
    // …unless that address is listed, at the listed port.
    ['10.0.0.5', 5432, undefined],
    ['::ffff:10.0.0.5', 5432, undefined],
    ['10.0.0.5', 22, /private/],
    ['fd00::7', 8080, undefined],
    ['fd00:0:0:0:0:0:0:7', 8080, undefined],
    ['192.168.1.9', 1, undefined],
    ['192.168.1.10', 1, /private/],
    // localhost means loopback and nothing else: listing it lists 127.0.0.0/8 and ::1 at its port.
    ['127.0.0.1', 8080, undefined],
    ['127.0.0.2', 8080, undefined],
    ['::1', 8080, undefined],
    ['127.0.0.1', 8081, /loopback/],
    ['10.0.0.1', 8080, /private/],
  ])('%s port %s: %s', (address, port, refusal) => {
    const reason = addressRefusal(address, port, entries);
    if (refusal === undefined) expect(reason).toBeUndefined();
    else expect(reason).toMatch(refusal);
  });

  it('a listed address counts at any port when the port is not known yet', () => {
    expect(addressListed('10.0.0.5', undefined, entries)).toBe(true);
    expect(addressListed('10.0.0.6', undefined, entries)).toBe(false);
    expect(addressListed('127.0.0.1', undefined, entries)).toBe(true);
    // A wildcard or another name never lists an address.
    expect(addressListed('10.0.0.5', undefined, ['*.corp', 'db.corp'])).toBe(false);
    expect(addressListed('127.0.0.1', undefined, ['*.localhost', 'evil.localhost'])).toBe(false);
  });
});
