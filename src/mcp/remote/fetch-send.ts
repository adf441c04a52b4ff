// One request of the guarded fetch, redirects not followed: every address the host name resolves
// to is checked inside the socket's own lookup, so what is connected to is what was checked; the
// peer the socket reached is checked again; the response headers must come within a time limit.

import type { LookupAddress } from 'node:dns';
import type { Agent, ClientRequest, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { formatSeconds, startDeadline } from '../../core/deadline.ts';
import type { LookupFn } from '../../tools/types.ts';
import type { RemoteChecks } from './fetch-checks.ts';
import { RemoteNetworkError, RemoteRefusedError } from './fetch-errors.ts';
import { urlHost } from './hosts.ts';

export interface SendContext {
  server: string;
  resolve: LookupFn;
  checks: RemoteChecks;
  agentFor(protocol: string): Agent;
  headersTimeoutMs: number;
}

export interface OutgoingRequest {
  url: URL;
  method: string;
  headers: Headers;
  body: Buffer | undefined;
  signal: AbortSignal | undefined;
}

type LookupCallback = (error: Error | null, address: string | LookupAddress[], family?: number) => void;

export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/**
 * Node calls this for each connection, with {all: true} when it races address families; the
 * addresses it gets back are the only ones it connects to.
 */
function checkedLookup(context: SendContext, url: URL) {
  return (hostname: string, lookupOptions: { all?: boolean }, callback: LookupCallback): void => {
    context
      .resolve(hostname)
      .then((addresses) => {
        if (addresses.length === 0)
          throw new RemoteNetworkError(`${hostname} did not resolve to any address`);
        for (const entry of addresses) context.checks.guardAddress(hostname, entry.address, url);
        if (lookupOptions.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      })
      .catch((error: Error) => callback(error, ''));
  };
}

/** Second check, independent of the lookup: the peer this socket really reached. */
function verifyPeer(request: ClientRequest, context: SendContext, url: URL): void {
  const host = urlHost(url);
  request.once('socket', (socket: Socket) => {
    const verify = (): void => {
      const peer = socket.remoteAddress;
      try {
        if (peer) context.checks.guardAddress(host, peer, url);
      } catch (error) {
        socket.destroy(error as Error);
      }
    };
    if (socket.connecting) socket.once('connect', verify);
    else verify();
  });
}

function openRequest(out: OutgoingRequest, context: SendContext): ClientRequest {
  const mod =
    out.url.protocol === 'https:'
      ? process.getBuiltinModule('node:https')
      : process.getBuiltinModule('node:http');
  const flat: Record<string, string> = {};
  out.headers.forEach((value, name) => {
    flat[name] = value;
  });
  if (out.body) flat['content-length'] = String(out.body.byteLength);
  return mod.request(out.url, {
    method: out.method,
    headers: flat,
    agent: context.agentFor(out.url.protocol),
    lookup: checkedLookup(context, out.url) as never,
  });
}

/** Aborting the signal after the headers came ends the body too. */
function abortBodyWith(message: IncomingMessage, signal: AbortSignal | undefined): void {
  if (!signal) return;
  const onBodyAbort = (): void => {
    message.destroy(abortReason(signal) as Error);
  };
  signal.addEventListener('abort', onBodyAbort, { once: true });
  message.once('close', () => signal.removeEventListener('abort', onBodyAbort));
}

/** Sends one request; resolves with the response once its headers came. */
export function sendRequest(out: OutgoingRequest, context: SendContext): Promise<IncomingMessage> {
  const { url, signal } = out;
  return new Promise<IncomingMessage>((resolvePromise, reject) => {
    let request: ClientRequest;
    try {
      request = openRequest(out, context);
    } catch (error) {
      reject(error);
      return;
    }
    // The headers' time limit, following the caller's signal; it holds under garbage collection
    // (src/core/deadline.ts). The body is bounded by the SDK's call timeout.
    const deadline = startDeadline(
      context.headersTimeoutMs,
      signal,
      () =>
        new RemoteNetworkError(
          `no answer from ${url.host} within ${formatSeconds(context.headersTimeoutMs)} (MCP server "${context.server}")`,
        ),
    );
    let settled = false;
    const fail = (error: unknown): void => {
      if (settled) return;
      settled = true;
      deadline.clear();
      deadline.signal.removeEventListener('abort', onAbort);
      reject(error);
    };
    const onAbort = (): void => {
      const reason = abortReason(deadline.signal);
      request.destroy(reason as Error);
      fail(reason);
    };
    deadline.signal.addEventListener('abort', onAbort, { once: true });
    verifyPeer(request, context, url);
    request.once('error', (error) => {
      if (error instanceof RemoteRefusedError || error instanceof RemoteNetworkError) fail(error);
      else {
        const code = (error as NodeJS.ErrnoException).code;
        fail(new RemoteNetworkError(`cannot reach ${url.host}: ${code ?? error.message}`, { cause: error }));
      }
    });
    request.once('response', (message) => {
      if (settled) {
        message.destroy();
        return;
      }
      settled = true;
      deadline.clear();
      deadline.signal.removeEventListener('abort', onAbort);
      abortBodyWith(message, signal);
      resolvePromise(message);
    });
    request.end(out.body);
  });
}
