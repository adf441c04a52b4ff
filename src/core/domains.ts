// Pure host rules: `allowed_domains` entries are exact names or `*.x.com` (subdomains only, never
// x.com itself), with an optional `:port`. An IP literal is matched only by the same literal.
// A wildcard over a public suffix (`*.com`, `*.co.uk`, `*.github.io`) would let anyone who can
// register a name there receive data, so it is judged by the Public Suffix List (tldts, pinned,
// ICANN and private sections), not by counting labels.
import { isIP } from 'node:net';
import type * as Tldts from 'tldts';

export interface DomainPattern {
  /** Lower-case host without the `*.`; for a wildcard, the suffix the host must end with after a dot. */
  host: string;
  wildcard: boolean;
  port?: number;
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Why a config entry cannot be a domain pattern, or undefined when it is fine. */
export function domainPatternProblem(entry: string): string | undefined {
  const parsed = parseDomainPattern(entry);
  return typeof parsed === 'string' ? parsed : undefined;
}

export function parseDomainPattern(entry: string): DomainPattern | string {
  const text = entry.trim().toLowerCase();
  if (text.includes('://') || text.includes('/')) return `"${entry}" is not a host name (no scheme or path)`;
  // A bare IPv6 literal has colons of its own; with a port it must be written in brackets.
  if (isIP(text) === 6) return { host: text, wildcard: false };
  let hostPart = text;
  let port: number | undefined;
  const colon = text.lastIndexOf(':');
  if (colon !== -1 && (!text.startsWith('[') || text[colon - 1] === ']')) {
    const portText = text.slice(colon + 1);
    if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
      return `"${entry}" has an invalid port`;
    }
    port = Number(portText);
    hostPart = text.slice(0, colon);
  }
  if (hostPart.startsWith('[') && hostPart.endsWith(']')) {
    const ip = hostPart.slice(1, -1);
    if (isIP(ip) !== 6) return `"${entry}" is not a valid IPv6 address`;
    return { host: ip, wildcard: false, ...(port ? { port } : {}) };
  }
  if (isIP(hostPart)) return { host: hostPart, wildcard: false, ...(port ? { port } : {}) };
  const wildcard = hostPart.startsWith('*.');
  const host = wildcard ? hostPart.slice(2) : hostPart;
  if (host.includes('*') || hostPart === '*') {
    return `"${entry}": a wildcard is only allowed as a leading "*." before a domain (like *.example.com)`;
  }
  const labels = host.split('.');
  if (!labels.every((label) => LABEL.test(label))) return `"${entry}" is not a valid host name`;
  if (wildcard && isPublicSuffix(host)) {
    const what =
      labels.length < 2 ? 'a whole top-level domain' : `every domain under the public suffix "${host}"`;
    return `"${entry}" would allow ${what}; name a registered domain, like *.example.${host}`;
  }
  return { host, wildcard, ...(port ? { port } : {}) };
}

/** Whether anyone may register names directly under `host` (the list's own rules; unknown TLDs count). */
export function isPublicSuffix(host: string): boolean {
  return publicSuffixList().getPublicSuffix(host, { allowPrivateDomains: true }) === host;
}

let tldts: typeof Tldts | undefined;

// Required on first use, not imported: evaluating the list's tables costs milliseconds that the
// `rune sandbox` fast path and every config without a wildcard would otherwise pay. esbuild still
// bundles it (a lazily initialised module), so the SEA needs no file on disk.
function publicSuffixList(): typeof Tldts {
  tldts ??= require('tldts') as typeof Tldts;
  return tldts;
}

/** Whether the host (and port) of a URL is covered by one of the patterns. */
export function hostAllowed(
  host: string,
  port: number,
  patterns: readonly DomainPattern[],
): DomainPattern | undefined {
  const name = host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
  const ip = isIP(name) !== 0;
  return patterns.find((pattern) => {
    if (pattern.port !== undefined && pattern.port !== port) return false;
    if (ip || isIP(pattern.host) !== 0) return !pattern.wildcard && pattern.host === name;
    return pattern.wildcard ? name.endsWith(`.${pattern.host}`) : name === pattern.host;
  });
}
