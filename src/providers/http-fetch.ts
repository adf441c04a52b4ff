// A fetch-compatible client over node:http/node:https for the model providers. Node 20's global
// fetch (undici) costs pipe mode a few hundred ms: its JS, its llhttp WebAssembly compile, and a V8
// worker still busy with that wasm when the process exits. This does what the providers and the
// openai SDK use — status, headers, a streamed body, text/json, abort, redirects — and no more.
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { decodedBody } from '../core/decoded-body.ts';

/** What the adapter accepts as request headers: a Headers object, pairs, or a plain record. */
export type HeadersInput =
  | { forEach(callback: (value: string, name: string) => void): void }
  | Iterable<readonly [string, string]>
  | Record<string, string | readonly string[] | undefined>;

export interface FetchInit {
  method?: string;
  headers?: HeadersInput;
  body?: string | Uint8Array | ArrayBuffer | URLSearchParams | AsyncIterable<Uint8Array | string> | null;
  signal?: AbortSignal | null;
  redirect?: 'follow' | 'manual' | 'error';
}

/** The read-only part of Headers the callers use. Names are matched case-insensitively. */
export interface HeadersView extends Iterable<[string, string]> {
  get(name: string): string | null;
  has(name: string): boolean;
  entries(): IterableIterator<[string, string]>;
  keys(): IterableIterator<string>;
  values(): IterableIterator<string>;
  forEach(callback: (value: string, name: string) => void): void;
}

/** The part of Response the providers and the openai SDK touch. */
export interface FetchResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  readonly url: string;
  readonly redirected: boolean;
  readonly headers: HeadersView;
  /** The decoded body, read once; null for HEAD and the null-body statuses. */
  readonly body: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array> | null;
  text(): Promise<string>;
  json(): Promise<unknown>;
  arrayBuffer(): Promise<ArrayBuffer>;
}

/** Global fetch is assignable to this, so tests keep passing scripted fetch functions. */
export type FetchLike = (url: string | URL, init?: FetchInit) => Promise<FetchResponse>;

const MAX_REDIRECTS = 20;
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

class ResponseHeaders implements HeadersView {
  // Lower-cased name → values in arrival order.
  private readonly map = new Map<string, string[]>();

  constructor(rawHeaders: readonly string[]) {
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      const name = (rawHeaders[i] as string).toLowerCase();
      const list = this.map.get(name);
      if (list) list.push(rawHeaders[i + 1] as string);
      else this.map.set(name, [rawHeaders[i + 1] as string]);
    }
  }

  get(name: string): string | null {
    const list = this.map.get(name.toLowerCase());
    return list ? list.join(', ') : null;
  }

  has(name: string): boolean {
    return this.map.has(name.toLowerCase());
  }

  *entries(): IterableIterator<[string, string]> {
    // Sorted by name, as Headers iterates; set-cookie stays one entry per cookie.
    for (const name of [...this.map.keys()].sort()) {
      const list = this.map.get(name) as string[];
      if (name === 'set-cookie') for (const value of list) yield [name, value];
      else yield [name, list.join(', ')];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  forEach(callback: (value: string, name: string) => void): void {
    for (const [name, value] of this.entries()) callback(value, name);
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
}

class NodeResponse implements FetchResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  readonly headers: ResponseHeaders;
  readonly body: (AsyncIterable<Uint8Array> & Readable) | null;
  private used = false;

  constructor(
    readonly url: string,
    readonly redirected: boolean,
    message: IncomingMessage,
    body: Readable | null,
  ) {
    this.status = message.statusCode ?? 0;
    this.ok = this.status >= 200 && this.status <= 299;
    this.statusText = message.statusMessage ?? '';
    this.headers = new ResponseHeaders(message.rawHeaders);
    this.body = body;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    if (this.used) throw new TypeError('Body is unusable: Body has already been read');
    this.used = true;
    if (!this.body) return new ArrayBuffer(0);
    const chunks: Buffer[] = [];
    for await (const chunk of this.body) chunks.push(chunk as Buffer);
    const all = Buffer.concat(chunks);
    return all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength) as ArrayBuffer;
  }

  async text(): Promise<string> {
    // TextDecoder drops a leading BOM, as Response.text() does.
    return new TextDecoder().decode(await this.arrayBuffer());
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }
}

function abortError(signal: AbortSignal): unknown {
  // fetch rejects with the signal's reason (a DOMException AbortError unless the caller gave one).
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** Request headers as lower-cased name → value, whatever form they were given in. */
function headerRecord(input: HeadersInput | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!input) return out;
  const add = (name: string, value: string): void => {
    const key = name.toLowerCase();
    out[key] = key in out ? `${out[key]}, ${value}` : value;
  };
  if (typeof (input as { forEach?: unknown }).forEach === 'function' && !Array.isArray(input)) {
    (input as { forEach(cb: (value: string, name: string) => void): void }).forEach((value, name) => {
      add(name, value);
    });
  } else if (Symbol.iterator in input) {
    for (const [name, value] of input as Iterable<readonly [string, string]>) add(name, value);
  } else {
    for (const [name, value] of Object.entries(input)) {
      if (value === undefined) continue;
      for (const one of typeof value === 'string' ? [value] : value) add(name, one);
    }
  }
  return out;
}

type PreparedBody = { bytes: Buffer } | { stream: AsyncIterable<Uint8Array | string> } | undefined;

function prepareBody(body: FetchInit['body'], headers: Record<string, string>): PreparedBody {
  if (body === undefined || body === null) return undefined;
  let bytes: Buffer;
  let type: string | undefined;
  if (typeof body === 'string') {
    bytes = Buffer.from(body, 'utf8');
    type = 'text/plain;charset=UTF-8';
  } else if (body instanceof Uint8Array) {
    bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  } else if (body instanceof ArrayBuffer) {
    bytes = Buffer.from(body);
  } else if (body instanceof URLSearchParams) {
    bytes = Buffer.from(body.toString(), 'utf8');
    type = 'application/x-www-form-urlencoded;charset=UTF-8';
  } else if (Symbol.asyncIterator in body) {
    return { stream: body };
  } else {
    throw new TypeError('http-fetch: unsupported request body (string, bytes or a stream)');
  }
  if (type && !('content-type' in headers)) headers['content-type'] = type;
  headers['content-length'] = String(bytes.byteLength);
  return { bytes };
}

interface Sent {
  message: IncomingMessage;
  /** Aborting the request after the answer started also ends the body with the abort error. */
  detach(): void;
}

async function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: PreparedBody,
  signal: AbortSignal | undefined,
): Promise<Sent> {
  // Loaded on first use (https pulls in tls and crypto). Not `import()`: the SEA runs bundles in a
  // vm.Script, which has no dynamic-import callback.
  const mod =
    url.protocol === 'https:'
      ? process.getBuiltinModule('node:https')
      : process.getBuiltinModule('node:http');
  return new Promise<Sent>((resolve, reject) => {
    const request = mod.request(url, { method, headers });
    let message: IncomingMessage | undefined;
    const onAbort = (): void => {
      const reason = abortError(signal as AbortSignal);
      if (message) message.destroy(reason as Error);
      request.destroy(reason as Error);
      reject(reason);
    };
    const detach = (): void => signal?.removeEventListener('abort', onAbort);
    signal?.addEventListener('abort', onAbort, { once: true });
    request.once('error', (error) => {
      detach();
      // undici's shape: TypeError "fetch failed" with the system error as its cause.
      reject(new TypeError('fetch failed', { cause: error }));
    });
    request.once('response', (response) => {
      message = response;
      response.once('close', detach);
      resolve({ message: response, detach });
    });
    if (!body) request.end();
    else if ('bytes' in body) request.end(body.bytes);
    else {
      (async () => {
        for await (const chunk of body.stream) {
          if (!request.write(chunk)) await new Promise((done) => request.once('drain', done));
        }
        request.end();
      })().catch((error: unknown) => request.destroy(error as Error));
    }
  });
}

/** fetch over node:http/node:https. TLS is verified as usual (NODE_EXTRA_CA_CERTS is honoured). */
export const httpFetch: FetchLike = async (input, init = {}) => {
  const signal = init.signal ?? undefined;
  if (signal?.aborted) throw abortError(signal);
  let url = new URL(String(input));
  let method = (init.method ?? 'GET').toUpperCase();
  const headers = headerRecord(init.headers);
  let body = prepareBody(init.body, headers);
  let redirected = false;
  for (let hops = 0; ; hops += 1) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new TypeError('fetch failed', { cause: new Error(`unsupported protocol ${url.protocol}`) });
    }
    const { message } = await send(url, method, headers, body, signal);
    const status = message.statusCode ?? 0;
    const location = message.headers.location;
    const follow = [301, 302, 303, 307, 308].includes(status) && location && init.redirect !== 'manual';
    if (!follow) {
      const nullBody = method === 'HEAD' || NULL_BODY_STATUSES.has(status);
      if (nullBody) message.resume();
      return new NodeResponse(url.href, redirected, message, nullBody ? null : decodedBody(message));
    }
    message.resume();
    if (init.redirect === 'error')
      throw new TypeError('fetch failed', { cause: new Error('unexpected redirect') });
    if (hops >= MAX_REDIRECTS)
      throw new TypeError('fetch failed', { cause: new Error('redirect count exceeded') });
    if (body && 'stream' in body && status !== 303) {
      throw new TypeError('fetch failed', {
        cause: new Error('cannot follow a redirect with a streamed body'),
      });
    }
    const next = new URL(location, url);
    // As fetch: 303 (and 301/302 after POST) become a GET without a body; credentials stay on their origin.
    if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
      method = method === 'HEAD' ? 'HEAD' : 'GET';
      body = undefined;
      for (const name of ['content-type', 'content-length', 'content-encoding', 'content-language']) {
        delete headers[name];
      }
    }
    if (next.origin !== url.origin) {
      delete headers.authorization;
      delete headers.cookie;
      delete headers['proxy-authorization'];
    }
    url = next;
    redirected = true;
  }
};
