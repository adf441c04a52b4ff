// Lets a mode say that this run went through its main path (for the cli: an agent answer), so the
// V8 code cache written at exit covers what later runs of that path compile (src/core/bundles.ts).
// Process state rather than module state: each mode bundle carries its own copy of this module.
import { processSlot } from './process-slot.ts';

const run = processSlot('rune.codeCache.mainPath', () => ({ mainPath: false }));

/** This run compiled the mode's main path: its code cache should replace one from a side path. */
export function markMainPath(): void {
  run.mainPath = true;
}

export function ranMainPath(): boolean {
  return run.mainPath;
}
