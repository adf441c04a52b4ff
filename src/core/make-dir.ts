// mkdir -p, one folder at a time, reporting the real reason. Node 20's recursive mkdirSync answers
// ENOENT for any failure below a missing folder (a read-only HOME gives "ENOENT … mkdir ~/.rune",
// not EROFS), and it loops for ever where mkdir(2) answers ENOENT although the parent exists (a
// folder under /proc), so it is never used for rune's own folders.
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Makes `path` and its missing parents; returns the first folder it made, as mkdirSync does. */
export function makeDir(path: string, mode = 0o700): string | undefined {
  const missing: string[] = [];
  let current = resolve(path);
  while (!existsSync(current)) {
    missing.unshift(current);
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
  let first: string | undefined;
  for (const dir of missing) {
    try {
      mkdirSync(dir, { mode });
      first ??= dir;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  return first;
}
