// The `require` a mode bundle is run with (src/core/bundles.ts): the heavy Node builtins it names
// are loaded when first used, not when the bundle starts. A bundle names every builtin any of its
// code paths needs (child_process and crypto for tools, readline for the session, worker_threads
// for the file walk), yet a pipe answer touches almost none of them; loading them all cost a run
// ~70 extra internal modules (measured with process.moduleLoadList).
//
// Only plain-object modules are deferred (a proxy cannot stand in for a callable module such as
// `events` or `stream`), and the proxy forwards everything: a named import reads a property and
// loads the module then; a default import enumerates the keys and so loads it at once.

/** Builtins that are plain objects, costly to load, and often named but not used by a run. */
export const DEFERRED_BUILTINS: ReadonlySet<string> = new Set([
  'child_process',
  'crypto',
  'dgram',
  'dns',
  'dns/promises',
  'fs/promises',
  'http',
  'http2',
  'https',
  'inspector',
  'net',
  'perf_hooks',
  'readline',
  'readline/promises',
  'tls',
  'v8',
  'worker_threads',
  'zlib',
]);

type RequireFn = (id: string) => unknown;

/** A stand-in for a builtin module that loads it on first use. */
export function deferredModule(id: string, load: RequireFn): object {
  let real: Record<PropertyKey, unknown> | undefined;
  const module = (): Record<PropertyKey, unknown> => {
    real ??= load(id) as Record<PropertyKey, unknown>;
    return real;
  };
  return new Proxy(
    {},
    {
      // esbuild's interop asks every module whether it is an ES module; a builtin never is, and
      // answering must not load it.
      get: (_target, key) => (key === '__esModule' && real === undefined ? undefined : module()[key]),
      set: (_target, key, value) => {
        module()[key] = value;
        return true;
      },
      has: (_target, key) => key in module(),
      ownKeys: () => Reflect.ownKeys(module()),
      // Reported configurable: the empty target holds none of these, and a proxy may not claim
      // a non-configurable property its target lacks.
      getOwnPropertyDescriptor: (_target, key) => {
        const descriptor = Reflect.getOwnPropertyDescriptor(module(), key);
        return descriptor && { ...descriptor, configurable: true };
      },
      getPrototypeOf: () => Reflect.getPrototypeOf(module()),
    },
  );
}

/** Wraps `require`: deferred builtins (with or without `node:`) become stand-ins, one per name. */
export function lazyBuiltinRequire(load: RequireFn): RequireFn {
  const standIns = new Map<string, object>();
  return (id) => {
    const name = id.startsWith('node:') ? id.slice(5) : id;
    if (!DEFERRED_BUILTINS.has(name)) return load(id);
    let standIn = standIns.get(name);
    if (!standIn) {
      standIn = deferredModule(id, load);
      standIns.set(name, standIn);
    }
    return standIn;
  };
}
