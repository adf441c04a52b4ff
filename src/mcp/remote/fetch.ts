// The fetch every request for a remote MCP server goes through (the SDK's transports and its OAuth
// client alike). Each URL's host must be granted (fetch-checks.ts); every address a name resolves to
// passes fetch_url's address checks inside the socket's own lookup, so what is connected to is what
// was checked; the connected address is checked again (fetch-send.ts); redirects are followed only
// hop by hop, each hop checked (here); response headers must come within a time limit; bodies and
// single events are bounded (fetch-body.ts).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { Agent } from 'node:http';
import type { LookupFn } from '../../tools/types.ts';
import { requestBody, toResponse } from './fetch-body.ts';
import { remoteChecks } from './fetch-checks.ts';
import { RemoteNetworkError } from './fetch-errors.ts';
import { abortReason, type OutgoingRequest, type SendContext, sendRequest } from './fetch-send.ts';
import type { HostGrant } from './hosts.ts';

export { BodyLimit } from './fetch-body.ts';
export { RemoteNetworkError, RemoteRefusedError } from './fetch-errors.ts';

export interface GuardedFetchOptions {
  grant: HostGrant;
  /** No response headers within this time: the request fails (the SDK's call timeout covers bodies). */
  headersTimeoutMs?: number;
  /** Largest body that is not an event stream (JSON answers, OAuth metadata). */
  maxBodyBytes?: number;
  /** Largest single event of an event stream (the stream itself may last as long as the session). */
  maxEventBytes?: number;
  /** Name resolution (injected by tests). */
  lookup?: LookupFn;
}

export type GuardedFetch = ((url: string | URL, init?: RequestInit) => Promise<Response>) & {
  /** Closes the kept-alive connections. */
  close(): void;
};

export const DEFAULT_HEADERS_TIMEOUT_MS = 30_000;
export const MAX_BODY_BYTES = 8 * 1024 * 1024;
export const MAX_EVENT_BYTES = 8 * 1024 * 1024;
const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

const defaultLookup: LookupFn = (host) =>
  new Promise((resolve, reject) => {
    dnsLookup(host, { all: true }, (error, addresses: LookupAddress[]) => {
      if (error) reject(error);
      else resolve(addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 })));
    });
  });

/** Keep-alive agents of one guarded fetch, one per scheme, never shared with unchecked requests. */
function agentPool(): { agentFor(protocol: string): Agent; close(): void } {
  const agents = new Map<string, Agent>();
  return {
    agentFor(protocol) {
      let agent = agents.get(protocol);
      if (!agent) {
        const mod =
          protocol === 'https:'
            ? process.getBuiltinModule('node:https')
            : process.getBuiltinModule('node:http');
        agent = new mod.Agent({ keepAlive: true });
        agents.set(protocol, agent);
      }
      return agent;
    },
    close() {
      for (const agent of agents.values()) agent.destroy();
      agents.clear();
    },
  };
}

/**
 * The request a redirect leads to: 303 (and 301/302 after a POST) turn into a GET without a body,
 * and credentials stay with the origin they were meant for.
 */
function redirected(out: OutgoingRequest, status: number, location: string): OutgoingRequest {
  const next = new URL(location, out.url);
  const headers = out.headers;
  let { method, body } = out;
  if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
    method = method === 'HEAD' ? 'HEAD' : 'GET';
    body = undefined;
    headers.delete('content-type');
  }
  if (next.origin !== out.url.origin) {
    headers.delete('authorization');
    headers.delete('cookie');
    headers.delete('proxy-authorization');
  }
  return { ...out, url: next, method, body };
}

/** A fetch for one remote server; its connections are its own (never shared with unchecked ones). */
export function createGuardedFetch(options: GuardedFetchOptions): GuardedFetch {
  const { grant } = options;
  const pool = agentPool();
  const checks = remoteChecks(grant);
  const context: SendContext = {
    server: grant.server,
    resolve: options.lookup ?? defaultLookup,
    checks,
    agentFor: pool.agentFor,
    headersTimeoutMs: options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS,
  };
  const limits = {
    maxBodyBytes: options.maxBodyBytes ?? MAX_BODY_BYTES,
    maxEventBytes: options.maxEventBytes ?? MAX_EVENT_BYTES,
    what: `MCP server "${grant.server}"`,
  };

  const guarded = async (input: string | URL, init: RequestInit = {}): Promise<Response> => {
    const signal = init.signal ?? undefined;
    if (signal?.aborted) throw abortReason(signal);
    const headers = new Headers(init.headers);
    let out: OutgoingRequest = {
      url: new URL(String(input)),
      method: (init.method ?? 'GET').toUpperCase(),
      headers,
      body: requestBody(init.body, headers),
      signal,
    };
    for (let hops = 0; ; hops++) {
      checks.checkUrl(out.url, hops === 0 ? 'a request' : 'a redirect');
      const message = await sendRequest(out, context);
      const status = message.statusCode ?? 0;
      const location = message.headers.location;
      const redirect = REDIRECT_STATUSES.has(status) && location !== undefined;
      if (!redirect || init.redirect === 'manual') return toResponse(message, out.method, limits);
      message.resume();
      if (init.redirect === 'error')
        throw new RemoteNetworkError(`${out.url.href} redirects, and redirects are refused here`);
      if (hops >= MAX_REDIRECTS)
        throw new RemoteNetworkError(`more than ${MAX_REDIRECTS} redirects from ${String(input)}`);
      out = redirected(out, status, location);
    }
  };

  return Object.assign(guarded, { close: pool.close });
}
