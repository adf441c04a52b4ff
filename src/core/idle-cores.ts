// How many cores are idle right now: the cores minus the threads the kernel has runnable at this
// instant (/proc/loadavg's fourth field, which counts the caller itself). The load average would
// answer for the last minute, when a burst of work is what asks.
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';

/** Idle cores besides the calling thread's own, from the runnable count in `loadavg` text. */
export function idleFrom(text: string, cores: number): number | undefined {
  const running = /^\S+ \S+ \S+ (\d+)\//.exec(text)?.[1];
  return running === undefined ? undefined : Math.max(0, cores - Number(running));
}

export function idleCores(): number {
  const cores = availableParallelism();
  let idle: number | undefined;
  try {
    idle = idleFrom(readFileSync('/proc/loadavg', 'utf8'), cores);
  } catch {
    // No /proc: the last minute's average.
  }
  return idle ?? Math.max(0, Math.floor(cores - 1 - loadavg()[0]!));
}
