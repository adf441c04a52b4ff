// The boundary's settings in one place: which security headers every response carries (helmet),
// how requests the router itself refuses are answered (malformed URLs, over-long parameters), and
// the 429 of every rate limit. The routes' own CSP for HTML pages and uploads is set where they are.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyHelmetOptions } from '@fastify/helmet';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import helmet from 'helmet';
import { ApiError, badRequest } from './http.ts';

/**
 * Every response: no sniffing, no framing, same-origin referrers, no cross-origin use of
 * resources, and a CSP that allows nothing (JSON, text and files run nothing); HTML pages replace
 * it with PAGE_CSP, uploads with UPLOAD_CSP.
 */
export const HELMET: FastifyHelmetOptions = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
  },
  frameguard: { action: 'deny' },
  referrerPolicy: { policy: 'same-origin' },
  crossOriginResourcePolicy: { policy: 'same-origin' },
};

/**
 * The headers helmet sets for HELMET, computed once. @fastify/helmet builds helmet's middleware
 * again on every request (and adds an async hook); these are constant, so a hook that sets them is
 * the same answer for a fraction of the work on every request.
 */
const SECURITY_HEADERS: ReadonlyArray<readonly [string, string]> = (() => {
  const headers: Array<[string, string]> = [];
  const res = {
    setHeader: (name: string, value: unknown) => {
      headers.push([name, String(value)]);
    },
    removeHeader: (name: string) => {
      const at = headers.findIndex(([n]) => n.toLowerCase() === name.toLowerCase());
      if (at >= 0) headers.splice(at, 1);
    },
  };
  helmet(HELMET as Parameters<typeof helmet>[0])(
    {} as IncomingMessage,
    res as unknown as ServerResponse,
    () => {},
  );
  return headers;
})();

function applyHeaders(res: ServerResponse): void {
  for (const [name, value] of SECURITY_HEADERS) res.setHeader(name, value);
}

/** The same headers as fastify keeps them (lower-case names), for `reply.headers()`. */
const SECURITY_OBJECT: Readonly<Record<string, string>> = Object.fromEntries(
  SECURITY_HEADERS.map(([name, value]) => [name.toLowerCase(), value]),
);

/**
 * onRequest hook: the security headers on every response (registered before any hook that may
 * throw). They go with the reply's own headers, which fastify keeps on errors too and writes in
 * one `writeHead`: headers set on the raw response as well make Node validate and store every one
 * of them a second time. A route that hijacks its reply writes `reply.getHeaders()` itself.
 */
export function securityHeaders(
  _req: FastifyRequest,
  reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  reply.headers(SECURITY_OBJECT);
  done();
}

/**
 * Requests fastify refuses before routing (no hooks run): a malformed URL (400) or a path
 * parameter past the router's limit (414 URI_TOO_LONG). Answered in the documented `{code, message}` shape and
 * with the same headers as every other response.
 */
export function frameworkErrors(
  error: Error & { code?: string },
  _req: FastifyRequest,
  reply: FastifyReply,
): void {
  applyHeaders(reply.raw);
  const answer =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new ApiError('URI_TOO_LONG', 'a path parameter is longer than any name or id can be')
      : badRequest('the URL is not valid (bad percent-encoding?)');
  void reply.status(answer.status).send({ code: answer.code, message: answer.message });
}

export function rateLimited(seconds: number, what = 'too many requests'): ApiError {
  const wait = Math.max(1, seconds);
  return new ApiError('RATE_LIMITED', `${what}; try again in ${wait} s`, {}, { 'Retry-After': String(wait) });
}

/** The security headers as raw header lines, for answers written to the socket before any routing. */
const RAW_HEADERS = SECURITY_HEADERS.map(([name, value]) => `${name}: ${value}\r\n`).join('');

/**
 * Requests Node's HTTP parser refuses before fastify sees them (headers past 16 KiB, a timeout,
 * bytes that are not HTTP): answered in the documented shape with the security headers, then closed.
 */
export function clientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [answer, reason] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [
          new ApiError(
            'HEADERS_TOO_LARGE',
            'the request headers are larger than 16 KiB; send fewer or shorter ones',
          ),
          'Request Header Fields Too Large',
        ]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [
            new ApiError('REQUEST_TIMEOUT', 'the request did not arrive in time; send it again'),
            'Request Timeout',
          ]
        : [badRequest('the request is not valid HTTP'), 'Bad Request'];
  const text = JSON.stringify({ code: answer.code, message: answer.message });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${answer.status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\n${RAW_HEADERS}Connection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy();
}
