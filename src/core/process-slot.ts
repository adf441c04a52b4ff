// State that belongs to the process rather than to one copy of a module. Each mode is bundled apart
// from main.ts (and from the others), so a module-level `const` exists once per bundle that holds
// the module; a registered symbol on globalThis is the one place every copy finds. This file is the
// only one in src/ allowed to touch globalThis (biome.json's noRestrictedGlobals).

/** The value kept under `Symbol.for(name)`, made by `init` the first time any copy asks. */
export function processSlot<T>(name: string, init: () => T): T {
  const global = globalThis as Record<symbol, unknown>;
  const key = Symbol.for(name);
  if (!(key in global)) global[key] = init();
  return global[key] as T;
}
