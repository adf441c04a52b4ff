// zod, in a module of its own so that src/config/schema.ts can require it when it builds its first
// schema: `require('zod/v4')` would resolve to zod's CommonJS build and put a second copy of zod in
// every bundle that also imports it (both copies shipped and set up on a run;
// tests/e2e/foundation.test.ts fails on it).
export { z } from 'zod/v4';
