// Small boundary helpers the route plugins share: the per-address rate limit of expensive routes
// and query parameters that must be given at most once.
import type { FastifyContextConfig, FastifyRequest } from 'fastify';
import { badRequest } from '../http.ts';
import type { Limits } from '../limits.ts';
import type { Asker } from '../worker-pool.ts';

/** Route config for searches, diffs and exports: `expensive_per_minute` per client address. */
export function expensive(limits: Limits): FastifyContextConfig {
  return { rateLimit: { max: limits.expensivePerMinute, timeWindow: 60_000 } };
}

/** Who asks for a task in the worker: visitors wait behind signed-in people, a few per address. */
export function asker(req: FastifyRequest): Asker {
  return { anonymous: req.principal === null, client: req.ip };
}

/** A query parameter as one string: repeated (`?q=a&q=b`) is a 400, absent is undefined. */
export function single(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw badRequest(`${name}: give it once`);
  return value;
}
