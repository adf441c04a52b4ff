// V8 flags a run changes while it runs. V8 stamps a code cache with a hash of every flag, so a
// cache written while a changed flag is in force is rejected by the next start, which runs with
// the defaults: each such run would compile its bundles cold and write the cache again. Whoever
// changes a flag registers how to undo it, and the caches are written after the undo.
import { processSlot } from './process-slot.ts';

type SetFlags = (flags: string) => void;

// One list for the whole process: the mode bundle that sets a flag and main.ts, which writes the
// caches, each hold their own copy of this module. The setter travels with the undo, so the entry
// never loads node:v8 itself (a start-up cost) for runs that changed nothing.
const undo = processSlot('rune.v8.flagsToRestore', () => [] as { set: SetFlags; restore: string }[]);

/**
 * Sets `flags` now and remembers `restore`, the flags that put V8's flag hash back to the start's
 * (the flag negated and every flag it implies, as `node --v8-options` lists them).
 */
export function setRunFlags(set: SetFlags, flags: string, restore: string): void {
  set(flags);
  undo.push({ set, restore });
}

/** Undoes every registered change, newest first; for the moment before the caches are written. */
export function restoreRunFlags(): void {
  for (let change = undo.pop(); change; change = undo.pop()) change.set(change.restore);
}
