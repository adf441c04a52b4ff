// What the net guard lets through, from `allowed_domains` entries: each exact name or IP literal,
// with the port the entry names (`api.example.com:443`) or any port. Wildcards cannot be resolved
// ahead of a call and give nothing inside the sandbox. A name leads only to its public addresses
// and to restricted ones listed themselves (src/core/addresses.ts). The entry syntax itself is
// parsed in one place, src/core/domains.ts. Pure.
import { isIP } from 'node:net';
import { addressListings, restrictedAddressReason } from '../core/addresses.ts';
import { parseDomainPattern } from '../core/domains.ts';

export interface GuardTarget {
  /** The entry as configured, for messages. */
  entry: string;
  /** Lower-case host name or IP literal, without brackets or port. */
  host: string;
  /** The only TCP port allowed; undefined: any port. */
  port?: number;
}

/** The entries the net guard can serve; wildcards and malformed entries are left out. */
export function guardTargets(entries: readonly string[]): GuardTarget[] {
  const out: GuardTarget[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    const pattern = parseDomainPattern(entry);
    if (typeof pattern === 'string' || pattern.wildcard) continue;
    const key = `${pattern.host} ${pattern.port ?? ''}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ entry, host: pattern.host, ...(pattern.port !== undefined ? { port: pattern.port } : {}) });
  }
  return out;
}

/** An IP literal needs no name service: it is its own address. */
export function literalAddresses(host: string): string[] | undefined {
  return isIP(host) !== 0 ? [host] : undefined;
}

/** An entry with the addresses rune resolved for it, outside the sandbox. */
export interface ResolvedName {
  /** Host name or IP literal (no port). */
  name: string;
  /** The only TCP port the entry allows; undefined: any. */
  port?: number;
  addresses: string[];
  /** The `allowed_domains` entry, for messages (defaults to the name). */
  entry?: string;
}

/** What the net guard serves: `--allow-addr` values, `/etc/hosts` lines, and what a name may not lead to. */
export interface GuardPlan {
  allow: string[];
  hosts: string[];
  /** "entry → address (why)" for each restricted address of a name that is not listed itself. */
  refused: string[];
}

/**
 * The (address, port) pairs the net guard lets through and the names the sandbox's /etc/hosts
 * holds. An IP literal is its own address. A name brings its public addresses at its own port; a
 * restricted one (loopback, private, link-local, …) only where an entry lists that address itself,
 * at that entry's port, so an allowed name whose DNS answer someone else controls cannot open the
 * host's loopback, the private network or a cloud metadata service.
 */
export function guardPlan(resolved: readonly ResolvedName[], entries: readonly string[]): GuardPlan {
  const allow = new Set<string>();
  const hosts = new Set<string>();
  const refused: string[] = [];
  for (const r of resolved) {
    const literal = isIP(r.name) !== 0;
    for (const address of r.addresses) {
      const reason = literal ? undefined : restrictedAddressReason(address);
      if (!reason) allow.add(allowAddrArg(address, r.port));
      else {
        const listings = addressListings(address, entries);
        if (listings.length === 0) {
          refused.push(`${r.entry ?? r.name} → ${reason}`);
          continue;
        }
        for (const listing of listings) allow.add(allowAddrArg(address, listing.port));
      }
      // An IP literal resolves by itself; only names go into the sandbox's /etc/hosts.
      if (!literal) hosts.add(`${address} ${r.name}`);
    }
  }
  return { allow: [...allow], hosts: [...hosts], refused };
}

/** The helper's `--allow-addr` value: `IP`, `IP:PORT` or `[IPV6]:PORT`. */
export function allowAddrArg(address: string, port?: number): string {
  if (port === undefined) return address;
  return isIP(address) === 6 ? `[${address}]:${port}` : `${address}:${port}`;
}

/** How `/policy full` and the docs describe one entry's network rule. */
export function describeTarget(entry: string): string {
  const pattern = parseDomainPattern(entry);
  if (typeof pattern === 'string') return `${entry}: ${pattern}`;
  const where = pattern.port !== undefined ? `TCP port ${pattern.port} only` : 'any TCP port';
  if (pattern.wildcard)
    return `${entry}: fetch_url only (${where}); a wildcard cannot be resolved for the sandbox`;
  return `${entry}: fetch_url and sandboxed tools, ${where}`;
}
