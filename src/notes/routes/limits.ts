// Small boundary helpers the route plugins share: the per-address rate limit of expensive routes
// and who asks for a task in the worker.
import type { FastifyContextConfig, FastifyRequest } from 'fastify';
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
