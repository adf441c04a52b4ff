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
  /** Event streams of signed-in people: in all, per person, per note. */
  maxStreams: number;
  maxStreamsPerClient: number;
  maxStreamsPerNote: number;
  /** Event streams of anonymous readers, apart: strangers never take editors' streams. */
  maxAnonymousStreams: number;
  maxAnonymousStreamsPerNote: number;
  /** Open connections of one client address (not counted for trusted proxies). */
  maxConnectionsPerClient: number;
  /** How long a response's waiting bytes may go without the client taking 64 KiB of them. */
  sendTimeoutMs: number;
  /** Headers and body of a request must arrive within this. */
  bodyTimeoutMs: number;
  /** Bodies read into memory, in all. */
  maxBodyMemoryBytes: number;
  /** Upload bytes being received, in all and per person. */
  maxUploadsInFlightBytes: number;
  maxUploadsInFlightBytesPerUser: number;
  /** CPU ms exports may take per client per minute. */
  exportCpuMsPerMinute: number;
  /** Quotas per person and minute. */
  filesPerMinute: number;
  revisionsPerMinute: number;
  uploadBytesPerMinute: number;
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
    maxAnonymousStreams: l.max_anonymous_streams,
    maxAnonymousStreamsPerNote: l.max_anonymous_streams_per_note,
    maxConnectionsPerClient: l.max_connections_per_client,
    sendTimeoutMs: l.send_timeout_secs * 1000,
    bodyTimeoutMs: l.body_timeout_secs * 1000,
    maxBodyMemoryBytes: l.max_body_memory_mb * 1024 * 1024,
    maxUploadsInFlightBytes: l.max_uploads_in_flight_mb * 1024 * 1024,
    maxUploadsInFlightBytesPerUser: l.max_uploads_in_flight_mb_per_user * 1024 * 1024,
    exportCpuMsPerMinute: l.export_cpu_ms_per_minute,
    filesPerMinute: l.files_per_minute,
    revisionsPerMinute: l.revisions_per_minute,
    uploadBytesPerMinute: l.upload_mb_per_minute * 1024 * 1024,
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
 * Units per second per key (a token bucket holding `burstSeconds` worth, two by default): what a
 * request may cost when the cost is its size (bytes, CPU ms), not its count (@fastify/rate-limit
 * counts requests), and quotas per minute (a bucket of one minute's worth).
 */
export class ByteBudget {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = Date.now,
    private readonly burstSeconds = 2,
  ) {}

  /** Takes `bytes` from the key's bucket: 0 when allowed, else the seconds to wait. */
  take(key: string, bytes: number): number {
    const now = this.now();
    const capacity = this.perSecond * this.burstSeconds;
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

  /**
   * Takes what is left in the key's bucket, up to `units` (work already done, such as CPU spent):
   * never refuses; the debt shows in the next `take`.
   */
  charge(key: string, units: number): void {
    const wait = this.take(key, units);
    if (wait === 0) return;
    const bucket = this.buckets.get(key);
    if (bucket) bucket.tokens -= units;
  }

  /** Seconds until the key's bucket holds `units` again (0: now). */
  waitFor(key: string, units: number): number {
    const bucket = this.buckets.get(key);
    if (!bucket) return 0;
    const tokens = bucket.tokens + ((this.now() - bucket.at) / 1000) * this.perSecond;
    return tokens >= units ? 0 : (units - tokens) / this.perSecond;
  }

  /** Full buckets carry no information: they are dropped so the table stays small. */
  private prune(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond >= this.perSecond * this.burstSeconds)
        this.buckets.delete(key);
    }
  }
}
