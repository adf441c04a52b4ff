// The guarded fetch's checks of where a request may go: the URL (scheme, no credentials, a granted
// host, no metadata service) before a request, and each address a name resolves to or a socket
// reached (no private, loopback, link-local or reserved address unless that address is granted itself).

import { isIP } from 'node:net';
import { addressRefusal } from '../../core/addresses.ts';
import { explicitlyAllowed, isMetadataHost } from '../../tools/addresses.ts';
import { RemoteRefusedError } from './fetch-errors.ts';
import { grantedDomains, type HostGrant, hostRefusal, keyToAdd, urlHost } from './hosts.ts';

export interface RemoteChecks {
  /** Throws when `address` is private, loopback, link-local or reserved and not granted itself. */
  guardAddress(host: string, address: string, url: URL): void;
  /** Throws when the URL of a request (or of a redirect) may not be fetched. */
  checkUrl(url: URL, purpose: string): void;
}

export function remoteChecks(grant: HostGrant): RemoteChecks {
  const allowed = grantedDomains(grant);
  const guardAddress = (host: string, address: string, url: URL): void => {
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    const reason = addressRefusal(address, port, allowed);
    if (reason) {
      const entry = isIP(address) === 6 ? `[${address}]:${port}` : `${address}:${port}`;
      throw new RemoteRefusedError(
        `refused to connect to ${host} for MCP server "${grant.server}": ${reason}; only an address listed itself may be reached there: ${keyToAdd(grant, entry)}`,
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
