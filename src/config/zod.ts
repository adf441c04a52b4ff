// zod, in a module of its own so that src/config/schema.ts can require it when it builds its first
// schema: `require('zod/v4')` would resolve to zod's CommonJS build and put a second copy of zod in
// every bundle that also imports it (the cli bundle: ~300 KB more and both copies set up on a run).
export { z } from 'zod/v4';
