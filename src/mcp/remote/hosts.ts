// Whether rune may connect to a host for a remote MCP server, and which key to add when it may not.
// Pure: the lists come in as values; the address checks at connect time are in fetch.ts.
import { type DomainPattern, hostAllowed, parseDomainPattern } from '../../core/domains.ts';

/** Where a server was configured: it decides which key the refusal names. */
export type ServerOrigin = 'table' | 'flag' | 'source';

export interface HostGrant {
  server: string;
  origin: ServerOrigin;
  /** The server's own `allowed_domains`. */
  tableDomains: readonly string[];
  /** `policy.allowed_domains` of the run. */
  policyDomains: readonly string[];
  /** `--unrestricted`: the lists are not consulted (the address checks still are). */
  unrestricted: boolean;
}

export function urlHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

export function urlPort(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

/** Every entry that grants hosts to this server: its own list first, then the policy's. */
export function grantedDomains(grant: HostGrant): string[] {
  return [...grant.tableDomains, ...grant.policyDomains];
}

function patterns(entries: readonly string[]): DomainPattern[] {
  return entries
    .map(parseDomainPattern)
    .filter((pattern): pattern is DomainPattern => typeof pattern !== 'string');
}

/** The narrowest entry that would allow this URL: the host, with its port when the URL names one. */
export function suggestedEntry(url: URL): string {
  const host = url.hostname.toLowerCase();
  return url.port ? `${host}:${url.port}` : host;
}

/** The key a user adds the entry to, in the words of where the server was configured. */
export function keyToAdd(grant: HostGrant, entry: string): string {
  switch (grant.origin) {
    case 'table':
      return `add "${entry}" to allowed_domains in the [[mcp]] table "${grant.server}" (or to policy.allowed_domains)`;
    case 'source':
      return `add "${entry}" to allowed_domains of the source.mcp entry "${grant.server}" (or to source.policy.allowed_domains)`;
    case 'flag':
      return `add "${entry}" to policy.allowed_domains in rune.toml, or configure the server as an [[mcp]] table with its own allowed_domains`;
  }
}

/**
 * Why rune refuses to contact `url` for this server, or undefined when its host (and port) is on
 * the server's list or the policy's. `lead` describes the request in the refusal; by default it is
 * the server's own host (what start-up checks).
 */
export function hostRefusal(url: URL, grant: HostGrant, lead?: string): string | undefined {
  if (grant.unrestricted) return undefined;
  if (hostAllowed(urlHost(url), urlPort(url), patterns(grantedDomains(grant))) !== undefined)
    return undefined;
  const what = lead ?? `its host ${url.host} is not in allowed_domains`;
  return `${what}: ${keyToAdd(grant, suggestedEntry(url))}`;
}

/** The server's URL without query or fragment (they may carry a key), for /info and messages. */
export function displayUrl(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.origin}${url.pathname}${url.search ? '?…' : ''}`;
  } catch {
    return raw;
  }
}
