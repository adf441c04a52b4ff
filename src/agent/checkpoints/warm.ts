// First looks taken in the background: a folder's first look (every tracked file read and stored)
// is run a few milliseconds at a time whenever the event loop is idle — while the person types or
// the model thinks — so the first call that can write it does not wait for all of it. A call that
// comes first finishes what is left at once.
import type { FolderTracker } from './tracker.ts';
import type { Held } from './types.ts';

/** Time one slice of a first look may take before the event loop gets its turn again. */
const SLICE_MS = 8;

interface Pending {
  tracker: FolderTracker;
  steps: Generator<void, [string, Held][]>;
}

export class Warmup {
  readonly #pending = new Map<string, Pending>();
  readonly #adopt: (root: string, tracker: FolderTracker, entries: [string, Held][]) => void;
  #timer: NodeJS.Immediate | undefined;

  constructor(adopt: (root: string, tracker: FolderTracker, entries: [string, Held][]) => void) {
    this.#adopt = adopt;
  }

  has(root: string): boolean {
    return this.#pending.has(root);
  }

  /** The trackers still taking their first look. */
  trackers(): FolderTracker[] {
    return [...this.#pending.values()].map((pending) => pending.tracker);
  }

  /** Starts the first look of `root` in the background. */
  start(root: string, tracker: FolderTracker): void {
    this.#pending.set(root, { tracker, steps: tracker.firstLook() });
    this.#schedule();
  }

  /** Finishes every pending first look now. */
  finish(): void {
    for (const root of [...this.#pending.keys()]) this.#run(root, Number.POSITIVE_INFINITY);
  }

  /** Drops what is pending (the session ends); returns the trackers to close. */
  stop(): FolderTracker[] {
    if (this.#timer) clearImmediate(this.#timer);
    this.#timer = undefined;
    const trackers = [...this.#pending.values()].map((pending) => pending.tracker);
    this.#pending.clear();
    return trackers;
  }

  #schedule(): void {
    if (this.#timer || this.#pending.size === 0) return;
    // unref: a run that ends before the first look does not wait for it.
    this.#timer = setImmediate(() => {
      this.#timer = undefined;
      const until = performance.now() + SLICE_MS;
      for (const root of [...this.#pending.keys()]) if (!this.#run(root, until)) break;
      this.#schedule();
    }).unref();
  }

  /** Runs `root`'s first look until `until`; true when it is done. */
  #run(root: string, until: number): boolean {
    const pending = this.#pending.get(root);
    if (!pending) return true;
    for (;;) {
      const step = pending.steps.next();
      if (step.done) {
        this.#pending.delete(root);
        this.#adopt(root, pending.tracker, step.value);
        return true;
      }
      if (performance.now() >= until) return false;
    }
  }
}
