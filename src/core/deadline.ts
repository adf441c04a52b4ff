// The one way rune puts a time limit on something that waits on the network. On Node 20,
// `AbortSignal.any([signal, AbortSignal.timeout(ms)])` never fires once the timeout signal has been
// garbage-collected (the composite holds its sources weakly, and the timeout's timer holds its
// signal weakly too), so a silent server hangs the wait for good. Here the timer itself holds the
// controller whose signal is handed out: the deadline fires whatever the collector does.

export interface Deadline {
  /** Aborted when the time is up (reason: a `TimeoutError` DOMException) or the parent aborts. */
  readonly signal: AbortSignal;
  /** The time ran out (not the parent's abort). */
  readonly expired: boolean;
  /** How long the deadline was, in ms (for messages). */
  readonly ms: number;
  /** Stops the timer and lets go of the parent; call it once the wait is over. */
  clear(): void;
}

/**
 * A deadline `ms` from now that also follows `parent` (a caller's cancel), if given. `reason` is
 * what the signal aborts with when the time is up (default: a `TimeoutError` DOMException).
 */
export function startDeadline(ms: number, parent?: AbortSignal, reason?: () => unknown): Deadline {
  const controller = new AbortController();
  let expired = false;
  const onParentAbort = (): void => {
    clearTimeout(timer);
    controller.abort(parent?.reason);
  };
  // Referenced by the event loop until it fires or is cleared, and its closure holds the
  // controller: nothing here can be collected while the deadline is pending.
  const timer = setTimeout(() => {
    expired = true;
    parent?.removeEventListener('abort', onParentAbort);
    controller.abort(reason?.() ?? new DOMException(`no answer within ${formatSeconds(ms)}`, 'TimeoutError'));
  }, ms);
  if (parent?.aborted) onParentAbort();
  else parent?.addEventListener('abort', onParentAbort, { once: true });
  return {
    signal: controller.signal,
    get expired() {
      return expired;
    },
    ms,
    clear() {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParentAbort);
    },
  };
}

/** `30 s`, `1.5 s`, `250 ms`: how a deadline reads in a message. */
export function formatSeconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Number((ms / 1000).toFixed(1))} s`;
}
