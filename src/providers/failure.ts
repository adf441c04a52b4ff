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
  /** The failure came as an error event inside an answer stream: `status` is what its type means. */
  readonly event: boolean;
  /** Text already reached the caller through onText, so a retry would repeat it. */
  partial = false;

  constructor(
    kind: FailureKind,
    message: string,
    options: { status?: number; retryAfterMs?: number; cause?: unknown; event?: boolean } = {},
  ) {
    super(redact(message), options.cause === undefined ? undefined : { cause: scrubbed(options.cause) });
    this.name = 'ProviderFailure';
    this.kind = kind;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.event = options.event ?? false;
  }

  get retryable(): boolean {
    if (this.partial) return false;
    if (this.kind === 'network' || this.kind === 'timeout') return true;
    if (this.kind !== 'http' || this.status === undefined) return false;
    return this.status === 408 || this.status === 429 || this.status >= 500;
  }
}

/**
 * An answer stream that ended without its end event (`what`, in the wire's words): no answer at
 * all, whatever text came before. Retried like a network failure (docs/adr/0033-run-outcomes.md).
 */
export function unterminated(what: string): ProviderFailure {
  return new ProviderFailure(
    'network',
    `the answer stream ended without ${what}: the connection was dropped or the server stopped mid-answer`,
  );
}

// The error types the wires send inside a stream, as the HTTP status each stands for: an overload
// or a server error is retried, a refused request is not.
const EVENT_STATUS: Record<string, number> = {
  overloaded_error: 529,
  rate_limit_error: 429,
  rate_limit_exceeded: 429,
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
};

/** An error event inside an answer stream; its status is the HTTP code given, else its type's. */
export function streamError(type: string | undefined, message: string, code?: number): ProviderFailure {
  const status = code !== undefined && code >= 400 && code < 600 ? code : (EVENT_STATUS[type ?? ''] ?? 500);
  return new ProviderFailure('http', type ? `${type}: ${message}` : message, { status, event: true });
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
  // node:http's word for a response whose connection closed before its end.
  if (error.message === 'aborted') return 'the connection was dropped before the answer ended (aborted)';
  const base = error.message.replace(/\.$/, '');
  if (deepest === error) return base;
  const inner = deepest as NodeJS.ErrnoException;
  return `${base}: ${inner.message}`;
}
