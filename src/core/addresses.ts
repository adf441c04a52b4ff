// The one meaning of a "restricted" address (loopback, private, link-local — cloud metadata lives
// there —, carrier-grade NAT, unspecified, multicast and reserved ranges, in IPv4 and IPv6, and the
// IPv6 forms that embed such an IPv4 address) and the rule every network path of rune applies to it:
// a name never leads to one unless that address is listed itself (fetch_url, remote MCP servers and
// the sandbox's net guard alike). Pure.
import { BlockList, isIP } from 'node:net';
import { parseDomainPattern } from './domains.ts';

const IPV4_RESTRICTED: readonly (readonly [string, number])[] = [
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
];
const IPV6_RESTRICTED: readonly (readonly [string, number])[] = [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
];

let blocked: BlockList | undefined;

// Built on first use: a call with no allowed domain never needs it.
function restrictedRanges(): BlockList {
  if (blocked) return blocked;
  blocked = new BlockList();
  for (const [net, prefix] of IPV4_RESTRICTED) blocked.addSubnet(net, prefix, 'ipv4');
  for (const [net, prefix] of IPV6_RESTRICTED) blocked.addSubnet(net, prefix, 'ipv6');
  return blocked;
}

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible or NAT64 IPv6 address. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|::ffff:0:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  // The URL parser writes [::127.0.0.1] as [::7f00:1]: IPv4-compatible and IPv4-translated forms too.
  const hex = /^(?:::ffff:|::ffff:0:|::|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex?.[1] && hex[2]) {
    const high = Number.parseInt(hex[1], 16);
    const low = Number.parseInt(hex[2], 16);
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return undefined;
}

function bare(address: string): string {
  return address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
}

/**
 * One spelling per address, so a listed address and a resolved one compare equal: an IPv6 address
 * that embeds an IPv4 one is that IPv4 address, any other IPv6 address takes the URL parser's
 * compressed form. Undefined when `address` is not an IP address.
 */
export function canonicalAddress(address: string): string | undefined {
  const text = bare(address);
  const family = isIP(text);
  if (family === 4) return text;
  if (family !== 6) return undefined;
  const inner = embeddedIpv4(text);
  if (inner && isIP(inner) === 4) return inner;
  return new URL(`http://[${text}]/`).hostname.slice(1, -1);
}

function isUnspecified(text: string): boolean {
  const canonical = canonicalAddress(text);
  return canonical === '::' || (canonical?.startsWith('0.') ?? false);
}

/** Why an address is restricted, or undefined when it is an ordinary public address. */
export function restrictedAddressReason(address: string): string | undefined {
  const text = bare(address);
  const family = isIP(text);
  if (family === 0) return `"${address}" is not an IP address`;
  if (isUnspecified(text))
    return `${text} is an unspecified address: this host to Linux, every local listener`;
  if (family === 6) {
    const inner = embeddedIpv4(text);
    if (inner) return restrictedAddressReason(inner);
    return restrictedRanges().check(text, 'ipv6')
      ? `${text} is a loopback, private, link-local or reserved address`
      : undefined;
  }
  if (text.startsWith('169.254.')) return `${text} is a link-local address (cloud metadata lives there)`;
  return restrictedRanges().check(text, 'ipv4')
    ? `${text} is a loopback, private or reserved address`
    : undefined;
}

/** 127.0.0.0/8 and ::1, also in their IPv4-mapped forms. */
export function isLoopbackAddress(address: string): boolean {
  const canonical = canonicalAddress(address);
  return canonical === '::1' || (canonical?.startsWith('127.') ?? false);
}

/**
 * The `allowed_domains` entries that list this very address, as the port each allows (undefined:
 * any). An IP literal lists itself; the name `localhost`, which means loopback and nothing else
 * (RFC 6761), lists the loopback addresses. Wildcards and other names list nothing.
 */
export function addressListings(address: string, entries: readonly string[]): { port?: number }[] {
  const wanted = canonicalAddress(address);
  if (wanted === undefined) return [];
  const loopback = isLoopbackAddress(wanted);
  const out: { port?: number }[] = [];
  for (const entry of entries) {
    const pattern = parseDomainPattern(entry);
    if (typeof pattern === 'string' || pattern.wildcard) continue;
    const lists =
      pattern.host === 'localhost'
        ? loopback
        : isIP(pattern.host) !== 0 && canonicalAddress(pattern.host) === wanted;
    if (lists) out.push(pattern.port === undefined ? {} : { port: pattern.port });
  }
  return out;
}

/** Whether an entry lists this address at `port` (undefined: at some port). */
export function addressListed(
  address: string,
  port: number | undefined,
  entries: readonly string[],
): boolean {
  return addressListings(address, entries).some(
    (listing) => port === undefined || listing.port === undefined || listing.port === port,
  );
}

/**
 * Why `host` may not lead to `address` (at `port`), or undefined when it may. An ordinary public
 * address is fine; a restricted one only when that address is listed itself (addressListed), so an
 * allowed name whose DNS someone else controls can never open the host's loopback, the private
 * network or a cloud metadata service.
 */
export function addressRefusal(
  address: string,
  port: number | undefined,
  entries: readonly string[],
): string | undefined {
  const reason = restrictedAddressReason(address);
  if (!reason || addressListed(address, port, entries)) return undefined;
  return reason;
}
