// Host-name rules of fetch_url and remote MCP servers: cloud metadata names and `allowed_domains`
// matching. Which addresses a name may lead to is src/core/addresses.ts.
import { parseDomainPattern } from '../core/domains.ts';

/** Host names that reach a cloud metadata service whatever they resolve to. */
const METADATA_HOSTS = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data']);

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

/** A cloud metadata name is reachable only when listed literally (no wildcard) in allowed_domains. */
export function explicitlyAllowed(host: string, patterns: readonly string[]): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, '');
  return patterns.some((raw) => {
    // The port of "host:8443" is checked by the policy and the redirect check, not here.
    const pattern = parseDomainPattern(raw);
    return typeof pattern !== 'string' && !pattern.wildcard && pattern.host === name;
  });
}
