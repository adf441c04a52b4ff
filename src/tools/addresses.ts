// Which network addresses fetch_url refuses by default: loopback, private, link-local (cloud
// metadata lives there), carrier-grade NAT, multicast and reserved ranges, in IPv4 and IPv6.
import { BlockList, isIP } from 'node:net';
import { parseDomainPattern } from '../core/domains.ts';

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/** Host names that reach a cloud metadata service whatever they resolve to. */
const METADATA_HOSTS = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data']);

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible or NAT64 IPv6 address. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|::ffff:0:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  // The URL parser writes [::127.0.0.1] as [::7f00:1]: IPv4-compatible and IPv4-translated forms too.
  const hex = /^(?:::ffff:|::ffff:0:|::|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const high = Number.parseInt(hex[1]!, 16);
    const low = Number.parseInt(hex[2]!, 16);
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return undefined;
}

/** Why an address is refused, or undefined when it is an ordinary public address. */
export function restrictedAddressReason(address: string): string | undefined {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 0) return `"${address}" is not an IP address`;
  if (family === 6) {
    const inner = embeddedIpv4(bare);
    if (inner) return restrictedAddressReason(inner);
    return blocked.check(bare, 'ipv6')
      ? `${bare} is a loopback, private, link-local or reserved address`
      : undefined;
  }
  if (bare.startsWith('169.254.')) return `${bare} is a link-local address (cloud metadata lives there)`;
  return blocked.check(bare, 'ipv4') ? `${bare} is a loopback, private or reserved address` : undefined;
}

export function isMetadataHost(host: string): boolean {
  return METADATA_HOSTS.has(host.toLowerCase().replace(/\.$/, ''));
}

/** `allowed_domains` matching: an exact name, or `*.x.com` for every subdomain of x.com. */
export function hostMatches(host: string, patterns: readonly string[]): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return patterns.some((raw) => {
    const pattern = raw.toLowerCase().replace(/\.$/, '');
    if (pattern.startsWith('*.')) return name.endsWith(pattern.slice(1)) && name.length > pattern.length - 1;
    return name === pattern;
  });
}

/** Restricted addresses are reachable only for a host listed literally (no wildcard) in allowed_domains. */
export function explicitlyAllowed(host: string, patterns: readonly string[]): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, '');
  return patterns.some((raw) => {
    // The port of "host:8443" is checked by the policy and the redirect check, not here.
    const pattern = parseDomainPattern(raw);
    return typeof pattern !== 'string' && !pattern.wildcard && pattern.host === name;
  });
}
