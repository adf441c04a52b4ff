// The guarded fetch's bodies: the request body as bytes, and the response as a web Response whose
// body is decoded (gzip, deflate, br) and bounded (a plain body in all, an event stream per event).

import type { IncomingMessage } from 'node:http';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { decodedBody } from '../../core/decoded-body.ts';
import { RemoteNetworkError } from './fetch-errors.ts';

const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

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

export function requestBody(body: RequestInit['body'], headers: Headers): Buffer | undefined {
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

export interface BodyLimits {
  /** Largest body that is not an event stream. */
  maxBodyBytes: number;
  /** Largest single event of an event stream. */
  maxEventBytes: number;
  /** Who sent it, for the error. */
  what: string;
}

export function toResponse(message: IncomingMessage, method: string, limits: BodyLimits): Response {
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
  const limited = decodedBody(message).pipe(
    new BodyLimit(eventStream ? limits.maxEventBytes : limits.maxBodyBytes, eventStream, limits.what),
  );
  message.once('error', (error) => limited.destroy(error));
  const body = Readable.toWeb(limited) as unknown as ReadableStream<Uint8Array>;
  return new Response(body, { status, statusText: message.statusMessage ?? '', headers });
}
