// What the net guard lets through, from `allowed_domains` entries: each exact name or IP literal,
// with the port the entry names (`api.example.com:443`) or any port. Wildcards cannot be resolved
// ahead of a call and give nothing inside the sandbox. The entry syntax itself is parsed in one
// place, src/policy/domains.ts. Pure.
import { isIP } from 'node:net';
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
