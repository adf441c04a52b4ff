// Loaded into the built binary by NODE_OPTIONS (tests/helpers/gc.ts): a full collection every
// 20 ms, so whatever only a weak reference keeps alive is gone while the process waits.
if (typeof globalThis.gc === 'function') setInterval(() => globalThis.gc(), 20).unref();
