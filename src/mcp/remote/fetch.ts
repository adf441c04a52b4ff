// The fetch every request for a remote MCP server goes through (the SDK's transports and its OAuth
// client alike). Each URL's host must be granted (hosts.ts); every address a name resolves to passes
// fetch_url's address checks inside the socket's own lookup, so what is connected to is what was
// checked; the connected address is checked again; redirects are followed only hop by hop, each
// hop checked; response headers must come within a time limit; bodies and single events are bounded.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { Agent, ClientRequest, IncomingMessage } from 'node:http';
import { isIP, type Socket } from 'node:net';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { explicitlyAllowed, isMetadataHost, restrictedAddressReason } from '../../tools/addresses.ts';
import type { LookupFn } from '../../tools/types.ts';
import { grantedDomains, type HostGrant, hostRefusal, keyToAdd, suggestedEntry, urlHost } from './hosts.ts';

/** The request was refused by rune's policy (a host not granted, a private address): never retried. */
export class RemoteRefusedError extends Error {
  override name = 'RemoteRefusedError';
}

/** The server could not be reached or stopped answering: a reason to try reconnecting. */
export class RemoteNetworkError extends TypeError {
  override name = 'RemoteNetworkError';
}

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
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

const defaultLookup: LookupFn = (host) =>
  new Promise((resolve, reject) => {
    dnsLookup(host, { all: true }, (error, addresses: LookupAddress[]) => {
      if (error) reject(error);
      else resolve(addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 })));
    });
  });

/**
 * Counts body bytes: a plain body may hold `limit` bytes in all, an event stream `limit` bytes per
 * event (an empty line ends an event), so a long-lived stream is fine and one endless event is not.
 */
export class BodyLimit extends Transform {
  private count = 0;
  private lineEmpty = true;
  private afterCr = false;

  constructor(
    private readonly limit: number,
    private readonly perEvent: boolean,
    private readonly what: string,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    callback(this.overLimit(chunk) ? this.tooLarge() : null, chunk);
  }

  /** Counts the chunk; true as soon as the body (or the event being read) is over the limit. */
  private overLimit(chunk: Buffer): boolean {
    if (!this.perEvent) {
      this.count += chunk.length;
      return this.count > this.limit;
    }
    for (const byte of chunk) {
      const lf = byte === 10;
      if (lf && this.afterCr) {
        // The LF of a CRLF: the CR already ended the line.
        this.afterCr = false;
        continue;
      }
      this.afterCr = byte === 13;
      if (lf || byte === 13) {
        if (this.lineEmpty) this.count = 0;
        this.lineEmpty = true;
      } else {
        this.lineEmpty = false;
        this.count += 1;
        if (this.count > this.limit) return true;
      }
    }
    return false;
  }

  private tooLarge(): RemoteNetworkError {
    return new RemoteNetworkError(
      `${this.what} sent ${this.perEvent ? 'an event' : 'a body'} larger than ${this.limit} bytes; the connection was closed`,
    );
  }
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

function requestBody(body: RequestInit['body'], headers: Headers): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') {
    if (!headers.has('content-type')) headers.set('content-type', 'text/plain;charset=UTF-8');
    return Buffer.from(body, 'utf8');
  }
  if (body instanceof URLSearchParams) {
    if (!headers.has('content-type'))
      headers.set('content-type', 'application/x-www-form-urlencoded;charset=UTF-8');
    return Buffer.from(body.toString(), 'utf8');
  }
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  throw new TypeError('remote MCP fetch: unsupported request body (a string, form parameters or bytes)');
}

function decoded(message: IncomingMessage): Readable {
  const encoding = (message.headers['content-encoding'] ?? '').trim().toLowerCase();
  const zlib = process.getBuiltinModule('node:zlib');
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? zlib.createGunzip({ flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH })
      : encoding === 'deflate'
        ? zlib.createInflate()
        : encoding === 'br'
          ? zlib.createBrotliDecompress()
          : undefined;
  if (!decoder) return message;
  message.pipe(decoder);
  message.once('error', (error) => decoder.destroy(error));
  return decoder;
}

/** A fetch for one remote server; its connections are its own (never shared with unchecked ones). */
export function createGuardedFetch(options: GuardedFetchOptions): GuardedFetch {
  const { grant } = options;
  const resolve = options.lookup ?? defaultLookup;
  const headersTimeoutMs = options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const agents = new Map<string, Agent>();
  const allowed = grantedDomains(grant);

  const agentFor = (protocol: string): Agent => {
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
  };

  /** Throws when `address` is private, loopback, link-local or reserved and the host is not granted by name. */
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

  const send = (
    url: URL,
    method: string,
    headers: Headers,
    body: Buffer | undefined,
    signal: AbortSignal | undefined,
  ): Promise<IncomingMessage> => {
    const host = urlHost(url);
    // Node calls this for each connection, with {all: true} when it races address families; the
    // addresses it gets back are the only ones it connects to.
    const lookup = (
      hostname: string,
      lookupOptions: { all?: boolean },
      callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
    ): void => {
      resolve(hostname)
        .then((addresses) => {
          if (addresses.length === 0)
            throw new RemoteNetworkError(`${hostname} did not resolve to any address`);
          for (const entry of addresses) guardAddress(hostname, entry.address, url);
          if (lookupOptions.all) callback(null, addresses);
          else callback(null, addresses[0]!.address, addresses[0]!.family);
        })
        .catch((error: Error) => callback(error, ''));
    };
    const mod =
      url.protocol === 'https:'
        ? process.getBuiltinModule('node:https')
        : process.getBuiltinModule('node:http');
    const flat: Record<string, string> = {};
    headers.forEach((value, name) => {
      flat[name] = value;
    });
    if (body) flat['content-length'] = String(body.byteLength);
    return new Promise<IncomingMessage>((resolvePromise, reject) => {
      let request: ClientRequest;
      try {
        request = mod.request(url, {
          method,
          headers: flat,
          agent: agentFor(url.protocol),
          lookup: lookup as never,
        });
      } catch (error) {
        reject(error);
        return;
      }
      let settled = false;
      const fail = (error: unknown): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        reject(error);
      };
      const timer = setTimeout(() => {
        const error = new RemoteNetworkError(
          `no answer from ${url.host} within ${headersTimeoutMs / 1000} s (MCP server "${grant.server}")`,
        );
        request.destroy(error);
        fail(error);
      }, headersTimeoutMs);
      const onAbort = (): void => {
        const reason = abortReason(signal as AbortSignal);
        request.destroy(reason as Error);
        fail(reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      // Second check, independent of the lookup: the peer this socket really reached.
      request.once('socket', (socket: Socket) => {
        const verify = (): void => {
          const peer = socket.remoteAddress;
          try {
            if (peer) guardAddress(host, peer, url);
          } catch (error) {
            socket.destroy(error as Error);
          }
        };
        if (socket.connecting) socket.once('connect', verify);
        else verify();
      });
      request.once('error', (error) => {
        if (error instanceof RemoteRefusedError || error instanceof RemoteNetworkError) fail(error);
        else {
          const code = (error as NodeJS.ErrnoException).code;
          fail(
            new RemoteNetworkError(`cannot reach ${url.host}: ${code ?? error.message}`, {
              cause: error,
            }),
          );
        }
      });
      request.once('response', (message) => {
        if (settled) {
          message.destroy();
          return;
        }
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (signal) {
          const onBodyAbort = (): void => {
            message.destroy(abortReason(signal) as Error);
          };
          signal.addEventListener('abort', onBodyAbort, { once: true });
          message.once('close', () => signal.removeEventListener('abort', onBodyAbort));
        }
        resolvePromise(message);
      });
      request.end(body);
    });
  };

  const toResponse = (message: IncomingMessage, method: string): Response => {
    const status = message.statusCode ?? 0;
    const headers = new Headers();
    const raw = message.rawHeaders;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      try {
        headers.append(raw[i] as string, raw[i + 1] as string);
      } catch {
        // A header value Headers refuses: dropped, as browsers do.
      }
    }
    if (method === 'HEAD' || NULL_BODY_STATUSES.has(status)) {
      message.resume();
      return new Response(null, { status, statusText: message.statusMessage ?? '', headers });
    }
    const type = (headers.get('content-type') ?? '').toLowerCase();
    const eventStream = type.startsWith('text/event-stream');
    const limited = decoded(message).pipe(
      new BodyLimit(
        eventStream ? (options.maxEventBytes ?? MAX_EVENT_BYTES) : (options.maxBodyBytes ?? MAX_BODY_BYTES),
        eventStream,
        `MCP server "${grant.server}"`,
      ),
    );
    message.once('error', (error) => limited.destroy(error));
    const body = Readable.toWeb(limited) as unknown as ReadableStream<Uint8Array>;
    return new Response(body, { status, statusText: message.statusMessage ?? '', headers });
  };

  const guarded = async (input: string | URL, init: RequestInit = {}): Promise<Response> => {
    const signal = init.signal ?? undefined;
    if (signal?.aborted) throw abortReason(signal);
    let url = new URL(String(input));
    let method = (init.method ?? 'GET').toUpperCase();
    const headers = new Headers(init.headers);
    let body = requestBody(init.body, headers);
    for (let hops = 0; ; hops++) {
      checkUrl(url, hops === 0 ? 'a request' : 'a redirect');
      const message = await send(url, method, headers, body, signal);
      const status = message.statusCode ?? 0;
      const location = message.headers.location;
      const redirect = [301, 302, 303, 307, 308].includes(status) && location !== undefined;
      if (!redirect || init.redirect === 'manual') return toResponse(message, method);
      message.resume();
      if (init.redirect === 'error')
        throw new RemoteNetworkError(`${url.href} redirects, and redirects are refused here`);
      if (hops >= MAX_REDIRECTS)
        throw new RemoteNetworkError(`more than ${MAX_REDIRECTS} redirects from ${String(input)}`);
      const next = new URL(location, url);
      if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
        method = method === 'HEAD' ? 'HEAD' : 'GET';
        body = undefined;
        headers.delete('content-type');
      }
      // Credentials stay with the origin they were meant for.
      if (next.origin !== url.origin) {
        headers.delete('authorization');
        headers.delete('cookie');
        headers.delete('proxy-authorization');
      }
      url = next;
    }
  };

  return Object.assign(guarded, {
    close(): void {
      for (const agent of agents.values()) agent.destroy();
      agents.clear();
    },
  });
}
