// The boundary's settings in one place: which security headers every response carries (helmet),
// how requests the router itself refuses are answered (malformed URLs, over-long parameters), and
// the 429 of every rate limit. The routes' own CSP for HTML pages and uploads is set where they are.
import type { FastifyHelmetOptions } from '@fastify/helmet';
import type { FastifyReply, FastifyRequest } from 'fastify';
import helmet from 'helmet';
import { ApiError } from './http.ts';

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

const applyHeaders = helmet(HELMET as Parameters<typeof helmet>[0]);

/**
 * Requests fastify refuses before routing (no hooks run): a malformed URL (400) or a path
 * parameter past the router's limit (414). Answered in the documented `{code, message}` shape and
 * with the same headers as every other response.
 */
export function frameworkErrors(
  error: Error & { code?: string },
  req: FastifyRequest,
  reply: FastifyReply,
): void {
  applyHeaders(req.raw, reply.raw, () => {});
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    void reply
      .status(414)
      .send({ code: 'BAD_REQUEST', message: 'a path parameter is longer than any name or id can be' });
    return;
  }
  void reply
    .status(400)
    .send({ code: 'BAD_REQUEST', message: 'the URL is not valid (bad percent-encoding?)' });
}

export function rateLimited(seconds: number, what = 'too many requests'): ApiError {
  const wait = Math.max(1, seconds);
  return new ApiError(
    429,
    'RATE_LIMITED',
    `${what}; try again in ${wait} s`,
    {},
    { 'Retry-After': String(wait) },
  );
}
