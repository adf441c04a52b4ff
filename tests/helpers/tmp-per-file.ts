// Set-up file of every vitest project: each test file gets its own TMPDIR, removed after the file,
// so folders made through tmpdir() (by tests, helpers and the code under test) do not pile up in /tmp.
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

// A reused worker would otherwise nest the next file's folder inside this (removed) one.
const base = process.env.RUNE_TEST_TMP_BASE ?? tmpdir();
process.env.RUNE_TEST_TMP_BASE = base;
const dir = mkdtempSync(join(base, 'rune-vitest-'));
process.env.TMPDIR = dir;

/** Tests make read-only and mode-000 folders on purpose; give them back to rm. */
function unlock(path: string): void {
  try {
    chmodSync(path, 0o700);
    for (const entry of readdirSync(path, { withFileTypes: true }))
      if (entry.isDirectory() && !entry.isSymbolicLink()) unlock(join(path, entry.name));
  } catch {
    // Not ours or gone already: rm below reports what is left.
  }
}

afterAll(() => {
  process.env.TMPDIR = base;
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch {
    unlock(dir);
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  }
});
