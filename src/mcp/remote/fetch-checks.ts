// The guarded fetch's checks of where a request may go: the URL (scheme, no credentials, a granted
// host, no metadata service) before a request, and each address a name resolves to or a socket
// reached (no private, loopback, link-local or reserved address unless the host is granted by name).

import { isIP } from 'node:net';
import { explicitlyAllowed, isMetadataHost, restrictedAddressReason } from '../../tools/addresses.ts';
import { RemoteRefusedError } from './fetch-errors.ts';
import { grantedDomains, type HostGrant, hostRefusal, keyToAdd, suggestedEntry, urlHost } from './hosts.ts';

export interface RemoteChecks {
  /** Throws when `address` is private, loopback, link-local or reserved and the host is not granted by name. */
  guardAddress(host: string, address: string, url: URL): void;
  /** Throws when the URL of a request (or of a redirect) may not be fetched. */
  checkUrl(url: URL, purpose: string): void;
}

export function remoteChecks(grant: HostGrant): RemoteChecks {
  const allowed = grantedDomains(grant);
  const guardAddress = (host: string, address: string, url: URL): void => {
    const reason = restrictedAddressReason(address);
    if (reason && !explicitlyAllowed(host, allowed)) {
      throw new RemoteRefusedError(
        `refused to connect to ${host} for MCP server "${grant.server}": ${reason}; only a host listed by name may be reached there: ${keyToAdd(grant, suggestedEntry(url))}`,
      );
    }
  };
  const checkUrl = (url: URL, purpose: string): void => {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new RemoteRefusedError(
        `${purpose} of MCP server "${grant.server}" is not an http(s) URL: ${url.protocol}`,
      );
    }
    if (url.username || url.password) {
      throw new RemoteRefusedError(
        `${purpose} of MCP server "${grant.server}" holds a user name or password`,
      );
    }
    const where = `${url.origin}${url.pathname}`;
    const refusal = hostRefusal(
      url,
      grant,
      `${purpose} of MCP server "${grant.server}" to ${where} was refused: ${url.host} is not in allowed_domains`,
    );
    if (refusal) throw new RemoteRefusedError(refusal);
    const host = urlHost(url);
    if (isMetadataHost(host) && !explicitlyAllowed(host, allowed)) {
      throw new RemoteRefusedError(`refused to connect to ${host}: a cloud metadata service`);
    }
    if (isIP(host)) guardAddress(host, host, url);
  };
  return { guardAddress, checkUrl };
}
