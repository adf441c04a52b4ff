// Forcing garbage collection while something waits: Node 20 loses a deadline whose timeout signal
// was collected (src/core/deadline.ts), which only shows when the collector really runs. In this
// process through V8's flag (as `node --expose-gc`); in the built binary through GC_PRELOAD.
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | undefined;

/** V8's full collection, as `global.gc()` under `--expose-gc`. */
export function collectGarbage(): void {
  gc ??=
    (globalThis as { gc?: () => void }).gc ??
    (() => {
      setFlagsFromString('--expose-gc');
      return runInNewContext('gc') as () => void;
    })();
  gc();
}

/** Settles as `promise` does, collecting garbage every `everyMs` meanwhile. */
export async function whileCollecting<T>(promise: Promise<T>, everyMs = 20): Promise<T> {
  const timer = setInterval(collectGarbage, everyMs);
  try {
    return await promise;
  } finally {
    clearInterval(timer);
  }
}

/**
 * NODE_OPTIONS for the built binary: `--expose-gc` and a preload that collects every 20 ms for as
 * long as the process lives (the interval does not keep it alive).
 */
export const GC_PRELOAD = join(import.meta.dirname, 'gc-preload.cjs');
export const GC_NODE_OPTIONS = `--expose-gc --require ${GC_PRELOAD}`;
