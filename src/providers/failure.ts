// What one provider attempt can fail with, in terms the retry policy understands. Messages are
// redacted when built, so a server that echoes the key back cannot carry it further.
import { redact } from '../core/redact.ts';
import type { FetchResponse } from './http-fetch.ts';

export type FailureKind =
  /** The server answered with an HTTP error status. */
  | 'http'
  /** No answer: connection refused or reset, DNS. */
  | 'network'
  /** request_timeout_secs expired. */
  | 'timeout'
  /** The caller's signal fired. */
  | 'aborted'
  /** The answer could not be understood. */
  | 'protocol';

export class ProviderFailure extends Error {
  readonly kind: FailureKind;
  readonly status: number | undefined;
  /** From Retry-After, already converted to milliseconds. */
  readonly retryAfterMs: number | undefined;
  /** Text already reached the caller through onText, so a retry would repeat it. */
  partial = false;

  constructor(
    kind: FailureKind,
    message: string,
    options: { status?: number; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(redact(message), options.cause === undefined ? undefined : { cause: scrubbed(options.cause) });
    this.name = 'ProviderFailure';
    this.kind = kind;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
  }

  get retryable(): boolean {
    if (this.partial) return false;
    if (this.kind === 'network' || this.kind === 'timeout') return true;
    if (this.kind !== 'http' || this.status === undefined) return false;
    return this.status === 408 || this.status === 429 || this.status >= 500;
  }
}

/**
 * A copy of a thrown error whose message, stack and causes are redacted: SDK errors carry the
 * server's body, and a server may echo the key back in it.
 */
export function scrubbed(error: unknown, depth = 0): unknown {
  if (!(error instanceof Error)) return typeof error === 'string' ? redact(error) : error;
  if (error instanceof ProviderFailure) return error;
  const copy = new Error(redact(error.message));
  copy.name = error.name;
  copy.stack = redact(error.stack ?? '');
  const code = (error as NodeJS.ErrnoException).code;
  if (code) (copy as NodeJS.ErrnoException).code = code;
  const status = (error as { status?: unknown }).status;
  if (typeof status === 'number') (copy as Error & { status?: number }).status = status;
  if (error.cause !== undefined && depth < 4) copy.cause = scrubbed(error.cause, depth + 1);
  return copy;
}

/** Retry-After is either delta-seconds or an HTTP date; anything else is ignored. */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (!value) return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

/** The readable part of an error body, whatever the wire: {error:{message}}, {message}, [{error:…}]. */
export function errorText(body: unknown, fallback: string): string {
  const first = Array.isArray(body) ? body[0] : body;
  if (typeof first === 'string' && first.trim()) return first.trim().slice(0, 500);
  if (first && typeof first === 'object') {
    const record = first as Record<string, unknown>;
    const inner = record.error;
    if (inner && typeof inner === 'object') {
      const message = (inner as Record<string, unknown>).message;
      if (typeof message === 'string') return message.slice(0, 500);
    }
    if (typeof inner === 'string') return inner.slice(0, 500);
    if (typeof record.message === 'string') return record.message.slice(0, 500);
  }
  return fallback;
}

/** Reads an error response into a ProviderFailure (status, Retry-After, the server's message). */
export async function failureFromResponse(response: FetchResponse, nowMs: number): Promise<ProviderFailure> {
  const text = await response.text().catch(() => '');
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), nowMs);
  // Without a message of the server's own, its status line says more than repeating the number.
  const fallback = response.statusText || 'the server gave no reason';
  return new ProviderFailure('http', errorText(body, fallback), {
    status: response.status,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}

/** Classifies an error thrown by fetch (or a body read) given which signals fired. */
export function failureFromThrown(
  error: unknown,
  userSignal: AbortSignal | undefined,
  timedOut: boolean,
): ProviderFailure {
  if (error instanceof ProviderFailure) return error;
  if (userSignal?.aborted)
    return new ProviderFailure('aborted', 'the model call was cancelled', { cause: error });
  if (timedOut) return new ProviderFailure('timeout', 'the model did not answer in time', { cause: error });
  const message = error instanceof Error ? describeNetworkError(error) : String(error);
  return new ProviderFailure('network', message, { cause: error });
}

// fetch hides the reason two causes deep (TypeError "fetch failed" → Error ECONNREFUSED …).
function describeNetworkError(error: Error): string {
  let deepest: unknown = error;
  for (let depth = 0; depth < 5; depth += 1) {
    const next = (deepest as { cause?: unknown }).cause;
    if (!(next instanceof Error)) break;
    deepest = next;
  }
  const base = error.message.replace(/\.$/, '');
  if (deepest === error) return base;
  const inner = deepest as NodeJS.ErrnoException;
  return `${base}: ${inner.message}`;
}
