// The bound on all checkpoints (checkpoints.max_mb): when a session's store would pass it, the
// stores of the sessions used least recently go first, whole; one that another running rune holds
// stays. When nothing is left to remove, the store does not grow and the checkpoint that needed
// the room is reported as not kept whole.
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { processAlive } from '../../core/process-alive.ts';
import { checkpointsDir, type StoreLimits } from './store.ts';

interface Other {
  id: string;
  dir: string;
  bytes: number;
  used: number;
}

function sizeOf(dir: string): { bytes: number; used: number } {
  let bytes = 0;
  let used = 0;
  for (const name of ['pack', 'journal']) {
    try {
      const st = statSync(join(dir, name));
      bytes += st.size;
      used = Math.max(used, st.mtimeMs);
    } catch {
      // Not there.
    }
  }
  return { bytes, used };
}

function heldByOther(dir: string): boolean {
  try {
    const pid = Number.parseInt(readFileSync(join(dir, 'lock'), 'utf8'), 10);
    return Number.isInteger(pid) && pid !== process.pid && processAlive(pid);
  } catch {
    return false;
  }
}

export class Budget implements StoreLimits {
  readonly #max: number;
  readonly #others: Other[];
  /** Sessions whose checkpoints were removed to make room, oldest first. */
  readonly removed: string[] = [];

  constructor(env: NodeJS.ProcessEnv, sessionId: string, maxBytes: number) {
    this.#max = maxBytes;
    const root = checkpointsDir(env);
    let names: string[] = [];
    try {
      names = readdirSync(root);
    } catch {
      // Nothing stored yet.
    }
    this.#others = names
      .filter((id) => id !== sessionId)
      .map((id) => ({ id, dir: join(root, id), ...sizeOf(join(root, id)) }))
      .sort((a, b) => a.used - b.used);
  }

  /** The other sessions' checkpoints, in bytes. */
  get othersBytes(): number {
    return this.#others.reduce((sum, other) => sum + other.bytes, 0);
  }

  room(bytes: number): boolean {
    while (this.othersBytes + bytes > this.#max) {
      const index = this.#others.findIndex((other) => !heldByOther(other.dir));
      if (index === -1) return false;
      const [oldest] = this.#others.splice(index, 1);
      rmSync(oldest!.dir, { recursive: true, force: true });
      this.removed.push(oldest!.id);
    }
    return true;
  }
}
