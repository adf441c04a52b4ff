// The cost budget of the notes server: every limit `[notes.limits]` can set (its default is in the
// config schema's DEFAULTS), in the units the code uses. One place, so routes, the event hub and the
// collaboration code agree.
import { DEFAULTS, type NotesConfig } from '../config/schema.ts';

export interface Limits {
  /** Largest text of one file, in UTF-8 bytes. */
  maxFileBytes: number;
  /** Largest stored Yjs state of one file. */
  maxDocumentBytes: number;
  /** Largest single collaborative update (decoded bytes). */
  maxUpdateBytes: number;
  /** Collaborative update bytes one editor may send per second (a burst of two seconds' worth). */
  collabBytesPerSecond: number;
  maxStreams: number;
  maxStreamsPerClient: number;
  maxStreamsPerNote: number;
  /** Open connections of one client address (not counted for trusted proxies). */
  maxConnectionsPerClient: number;
  /** How long a response's waiting bytes may go without the client taking 64 KiB of them. */
  sendTimeoutMs: number;
  presenceIntervalMs: number;
  searchBudgetMs: number;
  diffBudgetMs: number;
  expensivePerMinute: number;
  loginPerAccount: number;
  loginPerAddress: number;
  loginWindowMs: number;
  /** Query shape: characters of `q`, distinct words or phrases, and words in one phrase. */
  searchMaxChars: number;
  searchMaxTerms: number;
  searchMaxPhraseWords: number;
  /** Presence payload a client may attach (cursor, selection), as JSON bytes. */
  presenceStateBytes: number;
}

/** The limits in bytes and milliseconds; a key the config lacks takes its default (DEFAULTS in the schema). */
export function resolveLimits(notes: { limits?: Partial<NotesConfig['limits']> | undefined }): Limits {
  const l = { ...DEFAULTS.notes.limits, ...notes.limits };
  return {
    maxFileBytes: l.max_file_kb * 1024,
    maxDocumentBytes: l.max_document_kb * 1024,
    maxUpdateBytes: l.max_update_kb * 1024,
    collabBytesPerSecond: l.collab_kb_per_second * 1024,
    maxStreams: l.max_streams,
    maxStreamsPerClient: l.max_streams_per_client,
    maxStreamsPerNote: l.max_streams_per_note,
    maxConnectionsPerClient: l.max_connections_per_client,
    sendTimeoutMs: l.send_timeout_secs * 1000,
    presenceIntervalMs: l.presence_interval_ms,
    searchBudgetMs: l.search_budget_ms,
    diffBudgetMs: l.diff_budget_ms,
    expensivePerMinute: l.expensive_per_minute,
    loginPerAccount: l.login_attempts_per_account,
    loginPerAddress: l.login_attempts_per_address,
    loginWindowMs: l.login_window_minutes * 60_000,
    searchMaxChars: 256,
    searchMaxTerms: 10,
    searchMaxPhraseWords: 8,
    presenceStateBytes: 2048,
  };
}

/** Bytes of a text as stored (UTF-8), the unit of the file size limit. */
export function textBytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * Bytes per second per key (a token bucket holding two seconds' worth): what a request may cost
 * when the cost is its size, not its count (@fastify/rate-limit counts requests).
 */
export class ByteBudget {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes `bytes` from the key's bucket: 0 when allowed, else the seconds to wait. */
  take(key: string, bytes: number): number {
    const now = this.now();
    const capacity = this.perSecond * 2;
    const bucket = this.buckets.get(key) ?? { tokens: capacity, at: now };
    bucket.tokens = Math.min(capacity, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
    bucket.at = now;
    if (this.buckets.size > 10_000) this.prune(now);
    this.buckets.set(key, bucket);
    if (bucket.tokens >= bytes) {
      bucket.tokens -= bytes;
      return 0;
    }
    return Math.ceil((bytes - bucket.tokens) / this.perSecond);
  }

  /** Full buckets carry no information: they are dropped so the table stays small. */
  private prune(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond >= this.perSecond * 2)
        this.buckets.delete(key);
    }
  }
}
