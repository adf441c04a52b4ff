// .gitignore and .ignore semantics for a walk, with the `ignore` library doing the matching. Like
// ripgrep: .gitignore files count inside a git repository (and .git/info/exclude at its root),
// .ignore files count everywhere, a deeper file wins over a shallower one, a nested repository
// starts afresh, and a folder named explicitly as the walk's root is searched even when an
// ancestor's rules ignore it.
import { constants, fstatSync, readSync } from 'node:fs';
import ignore, { type Ignore } from 'ignore';
import type { FolderOps } from './folder-ops.ts';

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = constants;
/** Ignore files larger than this are not read (no real one is). */
const MAX_IGNORE_FILE = 1024 * 1024;

interface Layer {
  /** A root-relative path is tested as `add + path.slice(strip.length)` when it starts with `strip`. */
  strip: string;
  add: string;
  ig: Ignore;
  git: boolean;
}

export type ReadAt = (names: readonly string[]) => string | undefined;

/**
 * Reads a small regular file below an open folder (`names`: `.gitignore`, or `.git`, `info`,
 * `exclude`), one component at a time without following a symlink.
 */
export function readSmallFileAt(ops: FolderOps, dirFd: number, names: readonly string[]): string | undefined {
  const opened: number[] = [];
  try {
    let at = dirFd;
    for (const [index, name] of names.entries()) {
      const last = index === names.length - 1;
      at = ops.openAt(at, name, O_RDONLY | O_NOFOLLOW | (last ? O_NONBLOCK : O_DIRECTORY));
      opened.push(at);
    }
    const st = fstatSync(at);
    if (!st.isFile() || st.size > MAX_IGNORE_FILE) return undefined;
    const buffer = Buffer.alloc(st.size);
    let read = 0;
    while (read < st.size) {
      const n = readSync(at, buffer, read, st.size - read, read);
      if (n === 0) break;
      read += n;
    }
    return buffer.toString('utf8', 0, read);
  } catch {
    return undefined;
  } finally {
    for (const fd of opened) ops.close(fd);
  }
}

export class IgnoreRules {
  readonly #layers: readonly Layer[];
  /** Inside a git repository: .gitignore files apply. */
  readonly inRepo: boolean;

  private constructor(layers: readonly Layer[], inRepo: boolean) {
    this.#layers = layers;
    this.inRepo = inRepo;
  }

  static empty(): IgnoreRules {
    return new IgnoreRules([], false);
  }

  /** Layers for the ignore files of one folder; `strip`/`add` place them relative to the walk root. */
  static #folderLayers(
    names: ReadonlySet<string>,
    read: ReadAt,
    inRepo: boolean,
    place: { strip: string; add: string },
  ): { layers: Layer[]; inRepo: boolean; repoRoot: boolean } {
    const layers: Layer[] = [];
    const repoRoot = names.has('.git');
    const git = inRepo || repoRoot;
    const add = (text: string | undefined, isGit: boolean) => {
      if (text) layers.push({ ...place, ig: ignore().add(text), git: isGit });
    };
    if (repoRoot) add(read(['.git', 'info', 'exclude']), true);
    if (git && names.has('.gitignore')) add(read(['.gitignore']), true);
    // .ignore comes last: it overrides .gitignore in the same folder, as in ripgrep.
    if (names.has('.ignore')) add(read(['.ignore']), false);
    return { layers, inRepo: git, repoRoot };
  }

  /**
   * The rules in force inside a folder, given the names it holds and a reader for its files.
   * `rel` is the folder relative to the walk root ('' for the root).
   */
  enter(rel: string, names: ReadonlySet<string>, read: ReadAt): IgnoreRules {
    const found = IgnoreRules.#folderLayers(names, read, this.inRepo, {
      strip: rel === '' ? '' : `${rel}/`,
      add: '',
    });
    // A nested repository starts afresh: the outer repository's .gitignore rules stop at it.
    const kept = found.repoRoot ? this.#layers.filter((layer) => !layer.git) : this.#layers;
    if (found.layers.length === 0 && kept === this.#layers && found.inRepo === this.inRepo) return this;
    return new IgnoreRules([...kept, ...found.layers], found.inRepo);
  }

  /** True when the entry at `rel` (relative to the walk root, not '') is ignored. */
  ignored(rel: string, isDir: boolean): boolean {
    // The deepest rules first: the last matching rule wins, and deeper files come later.
    for (let i = this.#layers.length - 1; i >= 0; i--) {
      const layer = this.#layers[i]!;
      if (layer.strip !== '' && !rel.startsWith(layer.strip)) continue;
      const local = layer.add + rel.slice(layer.strip.length);
      if (local === '') continue;
      const result = layer.ig.test(isDir ? `${local}/` : local);
      if (result.ignored) return true;
      if (result.unignored) return false;
    }
    return false;
  }

  /**
   * The rules of the folders above the walk root, from the repository root down. `ancestors` are
   * the root's ancestors, nearest first, each with the path from it down to the root (`rel`).
   * Outside a repository only .ignore files would count, and rune reads none above the root then.
   * When these rules ignore the root itself, the caller named an ignored folder on purpose
   * (`node_modules`): the rules above are dropped and only those inside the root apply.
   */
  static above(
    ancestors: ReadonlyArray<{ rel: string; names: ReadonlySet<string>; read: ReadAt }>,
  ): IgnoreRules {
    const repoIndex = ancestors.findIndex((a) => a.names.has('.git'));
    if (repoIndex === -1) return IgnoreRules.empty();
    const layers: Layer[] = [];
    let inRepo = false;
    for (const ancestor of ancestors.slice(0, repoIndex + 1).reverse()) {
      const found = IgnoreRules.#folderLayers(ancestor.names, ancestor.read, inRepo, {
        strip: '',
        add: `${ancestor.rel}/`,
      });
      inRepo = found.inRepo;
      layers.push(...found.layers);
    }
    let rootIgnored = false;
    for (let i = layers.length - 1; i >= 0; i--) {
      const result = layers[i]!.ig.test(layers[i]!.add);
      rootIgnored = result.ignored;
      if (result.ignored || result.unignored) break;
    }
    return new IgnoreRules(rootIgnored ? [] : layers, inRepo);
  }
}
