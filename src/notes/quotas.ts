// What one person may add per minute (`[notes.limits]` files_per_minute, revisions_per_minute,
// upload_mb_per_minute): a bucket of one minute's worth per person and kind, taken before the
// request's body is read. Past it: 429 QUOTA_EXCEEDED with Retry-After, naming the quota. Live
// collaborative edits have their own byte budget (collab_kb_per_second) and do not count here.
import type { FastifyRequest } from 'fastify';
import { ApiError } from './http.ts';
import { ByteBudget, type Limits } from './limits.ts';

export type QuotaKind = 'files' | 'revisions' | 'uploadBytes';

const SETTING: Record<QuotaKind, string> = {
  files: 'files_per_minute',
  revisions: 'revisions_per_minute',
  uploadBytes: 'upload_mb_per_minute',
};

export class Quotas {
  private readonly buckets: Record<QuotaKind, { budget: ByteBudget; perMinute: number }>;

  constructor(limits: Limits, now: () => number = Date.now) {
    const bucket = (perMinute: number) => ({ budget: new ByteBudget(perMinute / 60, now, 60), perMinute });
    this.buckets = {
      files: bucket(limits.filesPerMinute),
      revisions: bucket(limits.revisionsPerMinute),
      uploadBytes: bucket(limits.uploadBytesPerMinute),
    };
  }

  /** Takes `amount` of the person's `kind` quota, or throws the 429 that says which one. */
  take(kind: QuotaKind, subject: string, amount = 1): void {
    const { budget, perMinute } = this.buckets[kind];
    // One request larger than a minute's worth can never pass: counted as a whole minute's worth.
    const wait = budget.take(subject, Math.min(amount, perMinute));
    if (wait === 0) return;
    const seconds = Math.max(1, Math.ceil(wait));
    throw new ApiError(
      'QUOTA_EXCEEDED',
      `you reached your quota (${SETTING[kind]} = ${kind === 'uploadBytes' ? perMinute / (1024 * 1024) : perMinute}); try again in ${seconds} s`,
      {},
      { 'Retry-After': String(seconds) },
    );
  }

  /** A route hook taking one of the caller's `kind` before the body is read (signed-in callers). */
  hook(...kinds: QuotaKind[]) {
    return async (req: FastifyRequest): Promise<void> => {
      if (!req.principal) return;
      for (const kind of kinds) this.take(kind, req.principal.subject);
    };
  }
}
