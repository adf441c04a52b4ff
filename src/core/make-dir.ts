// mkdir -p that reports the real reason. Node 20's recursive mkdirSync answers ENOENT for any
// failure below a missing folder (a read-only HOME gives "ENOENT … mkdir ~/.rune", not EROFS), so
// on ENOENT the missing folders are made one at a time, and the first failure is the true one.
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

export function makeDir(path: string, mode = 0o700): void {
  try {
    mkdirSync(path, { recursive: true, mode });
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const missing: string[] = [];
  let current = resolve(path);
  while (!existsSync(current)) {
    missing.unshift(current);
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const dir of missing) {
    try {
      mkdirSync(dir, { mode });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}
