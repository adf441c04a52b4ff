// The folders and files a run grants, resolved once and pinned: each grant's real path and identity
// (device, inode) are recorded when it is first pinned (at the start of the run), and every later
// use checks that the granted path still leads there. A call that moved a granted folder and left a
// link or another folder in its place gets a refusal that says so, never the new place.
import { realpathSync } from 'node:fs';
import { canonicalise, isUnder } from '../paths.ts';
import { PathRefused } from './refused.ts';
import { Root } from './root.ts';
import type { Kind } from './sys.ts';

/** One grant as pinned. */
interface Pin {
  /** The path as granted (absolute, lexical). */
  path: string;
  /** Its real path when pinned. */
  real: string;
  /** Device and inode then; undefined when nothing was there yet. */
  id?: { dev: number; ino: number; kind: Kind };
  /** Held open: folders only. */
  root?: Root;
}

/** Where a path lies: the held folder to resolve it from, and the rest below it. */
export interface Located {
  root: Root;
  rel: string;
}

/** The real path: libc's realpath for a path that exists (much cheaper), else canonicalise. */
function realOf(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return canonicalise(path);
  }
}

function replaced(pin: Pin, now: string): PathRefused {
  const shown = pin.path === pin.real ? pin.path : `${pin.path} (${pin.real})`;
  return new PathRefused(
    'moved',
    pin.path,
    `the granted ${pin.id?.kind === 'file' ? 'file' : 'folder'} ${shown} was replaced during the run (${now}): refused`,
  );
}

export class Grants {
  readonly #pins = new Map<string, Pin>();

  /** Pins each path not pinned yet; those pinned already are checked. Returns their real paths. */
  pinAll(paths: readonly string[]): string[] {
    return paths.map((path) => this.pin(path));
  }

  /**
   * The real path of the grant `path` (absolute). The first time: resolved and pinned. Later: the
   * same real path, after checking that `path` still leads to the same folder or file; a grant that
   * did not exist when pinned is pinned when it first appears (where its name says, through no link).
   */
  pin(path: string): string {
    const known = this.#pins.get(path);
    if (known?.id) {
      this.verify(known);
      return known.real;
    }
    const real = realOf(path);
    if (known && real !== known.real) throw replaced(known, `it now leads to ${real}`);
    const pin: Pin = { path, real };
    const id = identify(real);
    if (id) {
      pin.id = id.id;
      if (id.root) pin.root = id.root;
    }
    this.#pins.set(path, pin);
    return real;
  }

  /** The pinned real paths so far. */
  reals(): string[] {
    return [...this.#pins.values()].map((pin) => pin.real);
  }

  /**
   * The held folder to resolve the absolute real path `path` from: the deepest pinned folder grant
   * that holds it (checked again first), else '/'. Nothing on the way below it may be a link.
   */
  locate(path: string): Located {
    let best: Pin | undefined;
    for (const pin of this.#pins.values()) {
      if (!pin.root || !isUnder(path, pin.real)) continue;
      if (!best || pin.real.length > best.real.length) best = pin;
    }
    if (!best?.root) return { root: Root.system(), rel: path === '/' ? '' : path.slice(1) };
    this.verify(best);
    return { root: best.root, rel: path === best.real ? '' : path.slice(best.real.length + 1) };
  }

  private verify(pin: Pin): void {
    const real = realOf(pin.path);
    if (real !== pin.real) throw replaced(pin, `it now leads to ${real}`);
    const now = identify(real, false);
    if (!now) throw replaced(pin, 'it is gone');
    // A granted file may be a new file by the same name (an approved `> proof.txt` is made before
    // each call and removed when unused, src/agent/granted-files.ts): no link, no folder, so nothing
    // leads elsewhere. A folder must be the very one pinned.
    if (pin.id?.kind === 'file' && now.id.kind === 'file') {
      pin.id = now.id;
      return;
    }
    if (now.id.dev !== pin.id?.dev || now.id.ino !== pin.id.ino || now.id.kind !== pin.id.kind)
      throw replaced(pin, `another ${now.id.kind === 'dir' ? 'folder' : now.id.kind} is there now`);
  }

  /** Closes the held folders. */
  close(): void {
    for (const pin of this.#pins.values()) pin.root?.close();
    this.#pins.clear();
  }
}

/** Device and inode of the real path `real`, opened from '/' through no link; folders held open. */
function identify(
  real: string,
  hold = true,
): { id: { dev: number; ino: number; kind: Kind }; root?: Root } | undefined {
  const system = Root.system();
  const rel = real === '/' ? '' : real.slice(1);
  const st = (() => {
    try {
      return system.stat(rel);
    } catch {
      return undefined; // a link on the way: canonicalise just resolved it, so it changed meanwhile
    }
  })();
  if (!st) return undefined;
  const id = { dev: st.dev, ino: st.ino, kind: st.kind };
  if (st.kind !== 'dir' || !hold) return { id };
  try {
    const root = system.openDir(rel);
    return { id: { dev: root.dev, ino: root.ino, kind: 'dir' }, root };
  } catch {
    return { id };
  }
}
