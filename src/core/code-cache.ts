// Lets a mode say that this run went through its main path (for the cli: an agent answer), so the
// V8 code cache written at exit covers what later runs of that path compile (src/core/bundles.ts).
// A global rather than module state: each mode bundle carries its own copy of this module.

const KEY = Symbol.for('rune.codeCache.mainPath');

/** This run compiled the mode's main path: its code cache should replace one from a side path. */
export function markMainPath(): void {
  (globalThis as Record<symbol, unknown>)[KEY] = true;
}

export function ranMainPath(): boolean {
  return (globalThis as Record<symbol, unknown>)[KEY] === true;
}
