// The one retry policy of every provider: each attempt gets its own timeout; 429, 5xx, timeouts
// and network errors are retried with bounded exponential backoff that honours Retry-After; the
// caller's signal stops the wait at once. Nothing is retried once text has been streamed out.
import type { ProviderName } from '../config/schema.ts';
import { startDeadline } from '../core/deadline.ts';
import { RuneError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { PROVIDER_LABELS } from './credentials.ts';
import { failureFromThrown, ProviderFailure } from './failure.ts';
import type { ChatRequest, ChatResponse } from './types.ts';

/** One try at a model call; `signal` fires on the caller's cancel or the request timeout. */
export type Attempt = (request: ChatRequest, signal: AbortSignal) => Promise<ChatResponse>;

export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A server asking for a longer wait than this is not waited for: the call fails with its message. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
};

export interface RetryContext {
  provider: ProviderName;
  /** Where the key came from, named in auth errors instead of the key. */
  keySource: string | undefined;
  /** How the user chooses the provider (`--provider`, `source.provider`), named in auth errors. */
  providerSetting?: string;
  /** How the user sets the model and the endpoint, named when the server does not know them (404). */
  modelSetting?: string;
  baseUrlSetting?: string;
  timeoutMs: number;
  logger: Logger;
  policy?: RetryPolicy;
  sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
  now?: () => number;
}

/** The delay before retry number `retry` (1-based): the server's Retry-After, else exponential. */
export function retryDelay(retry: number, failure: ProviderFailure, policy: RetryPolicy): number {
  if (failure.retryAfterMs !== undefined) return failure.retryAfterMs;
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
}

export async function withRetries(
  attempt: Attempt,
  request: ChatRequest,
  context: RetryContext,
): Promise<ChatResponse> {
  const policy = context.policy ?? DEFAULT_RETRY;
  const sleep = context.sleep ?? abortableSleep;
  const userSignal = request.signal;
  let emitted = false;
  const onText = request.onText;
  const tracked: ChatRequest = onText
    ? {
        ...request,
        onText: (delta) => {
          if (delta) emitted = true;
          onText(delta);
        },
      }
    : request;

  for (let attemptNo = 1; ; attemptNo += 1) {
    if (userSignal?.aborted) throw cancelled(userSignal.reason);
    // Per attempt, following the caller's cancel; it holds under garbage collection (src/core/deadline.ts).
    const deadline = startDeadline(
      context.timeoutMs,
      userSignal,
      () => new ProviderFailure('timeout', 'request timed out'),
    );
    let failure: ProviderFailure;
    try {
      return await attempt(tracked, deadline.signal);
    } catch (error) {
      failure = failureFromThrown(error, userSignal, deadline.expired);
      if (userSignal?.aborted)
        failure = new ProviderFailure('aborted', 'the model call was cancelled', { cause: error });
      else if (deadline.expired && failure.kind !== 'http') {
        failure = new ProviderFailure('timeout', `no answer within ${context.timeoutMs / 1000} s`, {
          cause: error,
        });
      }
      failure.partial = emitted;
    } finally {
      deadline.clear();
    }

    if (failure.kind === 'aborted') throw cancelled(failure);
    const tooLong = failure.retryAfterMs !== undefined && failure.retryAfterMs > policy.maxRetryAfterMs;
    if (!failure.retryable || attemptNo >= policy.maxAttempts || tooLong) {
      throw toRuneError(failure, context, attemptNo);
    }
    const delay = retryDelay(attemptNo, failure, policy);
    context.logger.warn('provider.retry', {
      message: `${PROVIDER_LABELS[context.provider]}: ${describe(failure)}; retry ${attemptNo} of ${policy.maxAttempts - 1} in ${formatMs(delay)}`,
      provider: context.provider,
      status: failure.status,
      attempt: attemptNo,
      delayMs: delay,
    });
    try {
      await sleep(delay, userSignal);
    } catch (error) {
      throw cancelled(error);
    }
  }
}

function cancelled(cause: unknown): RuneError {
  return new RuneError('INTERRUPTED', 'the model call was cancelled', { cause });
}

function describe(failure: ProviderFailure): string {
  if (failure.event) return `an error event in the answer stream: ${failure.message}`;
  return failure.status === undefined ? failure.message : `HTTP ${failure.status}: ${failure.message}`;
}

function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s` : `${ms} ms`;
}

/** The error a caller sees: auth failures name the provider and where the key came from, never the key. */
export function toRuneError(failure: ProviderFailure, context: RetryContext, attempts: number): RuneError {
  const label = PROVIDER_LABELS[context.provider];
  if (failure.kind === 'http' && (failure.status === 401 || failure.status === 403)) {
    const from = context.keySource ? ` (key from ${context.keySource})` : '';
    return new RuneError('PROVIDER_AUTH', `${label} refused the credentials${from}: ${describe(failure)}`, {
      cause: failure,
      details: [
        `check the key, its permissions and the provider (${context.providerSetting ?? '--provider'})`,
      ],
    });
  }
  const tries = attempts > 1 ? ` after ${attempts} attempts` : '';
  const what =
    failure.kind === 'http'
      ? describe(failure)
      : failure.kind === 'timeout'
        ? `${failure.message} (request_timeout_secs)`
        : failure.message;
  return new RuneError(
    'PROVIDER_ERROR',
    `${label} failed${tries}: ${what}; ${failureHint(failure, context)}`,
    {
      cause: failure,
    },
  );
}

/** What to do about a failure that is not the credentials'. Kept in the message: callers that keep only it still show it. */
export function failureHint(failure: ProviderFailure, context: RetryContext): string {
  const status = failure.kind === 'http' ? failure.status : undefined;
  if (status === 404) {
    return `check the model name (${context.modelSetting ?? '--model'}) and the endpoint (${context.baseUrlSetting ?? '--base-url'})`;
  }
  if (status === 429)
    return 'the provider is limiting requests; wait and try again, or check the limits of your plan';
  if (status !== undefined && status >= 400 && status < 500) {
    return `the provider refused the request; check the model name (${context.modelSetting ?? '--model'}) and the provider (${context.providerSetting ?? '--provider'})`;
  }
  if (failure.kind === 'timeout') return 'try again, or allow more time with request_timeout_secs';
  if (failure.kind === 'protocol') {
    return `the answer was not in the wire format expected; check the endpoint (${context.baseUrlSetting ?? '--base-url'}) and the provider (${context.providerSetting ?? '--provider'})`;
  }
  return 'the provider is failing or unreachable; try again later';
}

export function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
