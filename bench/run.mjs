// Runs every benchmark under bench/ in turn (npm run bench). Each prints ratios against its own
// baseline, measured side by side in the same script. *lib.mjs files are shared helpers, not benches.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
let failed = 0;
for (const file of readdirSync(here)
  .filter((name) => name.endsWith('.mjs') && name !== 'run.mjs' && !name.endsWith('lib.mjs'))
  .sort()) {
  if (only.length && !only.some((name) => file.startsWith(name))) continue;
  console.log(`\n=== ${file}`);
  const result = spawnSync(process.execPath, [join(here, file)], { stdio: 'inherit' });
  if (result.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
