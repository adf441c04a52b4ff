// The changes src/core/fd/ makes below a held folder: folders made one component at a time, files
// created with O_EXCL, replaced by a temporary file renamed over them inside their verified folder,
// renames within the folder, and removals that never follow a link or cross into another mount.
import { constants, fchmodSync, fchownSync, fsyncSync, realpathSync, writeSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { kindRefused, PathRefused } from './refused.ts';
import { parts, Root } from './root.ts';
import { type Entry, O_PATH, RENAME_NOREPLACE } from './sys.ts';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_DIRECTORY } = constants;
const DIR_PATH = O_PATH | O_DIRECTORY;
const MAX_DEPTH = 256;

const code = (error: unknown) => (error as NodeJS.ErrnoException).code;

/** Makes the folder `rel` (and, with `parents`, those on its way); an existing folder is fine. */
export function makeFolder(
  root: Root,
  rel: string,
  options: { parents?: boolean; mode?: number } = {},
): void {
  const names = parts(rel);
  const mode = options.mode ?? 0o755;
  let dir = root.fd;
  try {
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      const last = i === names.length - 1;
      try {
        if (last || options.parents) root.sys.mkdirAt(dir, name, mode);
      } catch (error) {
        if (code(error) !== 'EEXIST') throw error;
      }
      let next: number;
      try {
        next = root.resolveIn(names.slice(0, i + 1).join('/'), DIR_PATH);
      } catch (error) {
        if (code(error) === 'ENOTDIR')
          throw kindRefused(
            root.where(names.slice(0, i + 1).join('/')),
            root.stat(names.slice(0, i + 1).join('/'))?.kind ?? 'unknown',
          );
        throw error;
      }
      if (dir !== root.fd) root.sys.close(dir);
      dir = next;
    }
  } finally {
    if (dir !== root.fd) root.sys.close(dir);
  }
}

function writeAll(fd: number, data: Uint8Array): void {
  let written = 0;
  while (written < data.length) written += writeSync(fd, data, written, data.length - written);
}

/** Creates the file `rel`, which must not exist (O_EXCL: not even as a dangling link). */
export function createFile(root: Root, rel: string, data: string | Uint8Array, mode = 0o644): void {
  const fd = root.resolveIn(rel, O_WRONLY | O_CREAT | O_EXCL, mode);
  try {
    writeAll(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
    fsyncSync(fd);
  } finally {
    root.sys.close(fd);
  }
}

export interface ReplaceOptions {
  /** Permissions of the new file (default: those of the regular file replaced, else 0644). */
  mode?: number;
  /** Owner to give the new file (root only; default: that of the file replaced). */
  owner?: { uid: number; gid: number };
  /** Make the folders on the way. */
  parents?: boolean;
  /**
   * What may be replaced: `file` (default) a regular file or nothing; `any` any entry but a folder
   * (a link or FIFO is replaced itself, never written through).
   */
  over?: 'file' | 'any';
  /** The file as it was read: refuse when it changed since (another writer). */
  unchanged?: Pick<Entry, 'ino' | 'size' | 'mtimeMs'>;
  /**
   * fsync the file before the rename and the folder after (default). `false` for rune's own
   * bookkeeping, which only has to survive rune being killed, not the machine losing power.
   */
  durable?: boolean;
}

const same = (a: Pick<Entry, 'ino' | 'size' | 'mtimeMs'>, b: Entry) =>
  a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;

function statOrNone(root: Root, dir: number, name: string): Entry | undefined {
  try {
    return root.sys.statAt(dir, name);
  } catch (error) {
    if (code(error) === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Replaces `rel` atomically: a temporary file beside it (O_EXCL), written, fsynced, renamed over
 * it inside the folder opened without following a link, then the folder fsynced. Returns what was
 * there before (undefined: nothing).
 */
export function replaceFile(
  root: Root,
  rel: string,
  data: string | Uint8Array,
  options: ReplaceOptions = {},
): Entry | undefined {
  const names = parts(rel);
  if (names.length === 0) throw kindRefused(root.path, 'dir');
  if (options.parents && names.length > 1) makeFolder(root, names.slice(0, -1).join('/'), { parents: true });
  const parent = root.parentOf(rel, O_RDONLY | O_DIRECTORY);
  const { dir, name } = parent;
  let tmp = '';
  let created = false;
  try {
    const before = statOrNone(root, dir, name);
    refuseOver(root.where(rel), before, options);
    const made = createTemporary(root, dir, name);
    tmp = made.tmp;
    const fd = made.fd;
    created = true;
    try {
      writeAll(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
      const kept = before?.kind === 'file' ? before : undefined;
      fchmodSync(fd, options.mode ?? (kept ? kept.mode & 0o7777 : 0o644));
      const owner = options.owner ?? kept;
      if (owner && process.getuid?.() === 0 && (owner.uid !== 0 || owner.gid !== 0)) {
        fchownSync(fd, owner.uid, owner.gid);
      }
      if (options.durable !== false) fsyncSync(fd);
    } finally {
      root.sys.close(fd);
    }
    // Checked again right before the rename: a writer between the read and now is not overwritten.
    refuseOver(root.where(rel), statOrNone(root, dir, name), options);
    root.sys.renameAt(dir, tmp, dir, name);
    created = false;
    if (options.durable !== false) {
      try {
        fsyncSync(dir);
      } catch {
        // Some file systems refuse fsync on a folder; the rename itself has happened.
      }
    }
    return before;
  } finally {
    if (created) {
      try {
        root.sys.unlinkAt(dir, tmp, false);
      } catch {
        // Already gone.
      }
    }
    parent.done();
  }
}

/**
 * A new temporary file beside `name` (O_EXCL, mode 0600). The name need not be unguessable: one
 * taken already (by anyone) is never opened, another is tried.
 */
function createTemporary(root: Root, dir: number, name: string): { fd: number; tmp: string } {
  for (let attempt = 0; ; attempt++) {
    const tmp = `.${name.slice(0, 200)}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.rune-tmp`;
    try {
      return { fd: root.sys.resolve(dir, tmp, O_WRONLY | O_CREAT | O_EXCL, 0o600), tmp };
    } catch (error) {
      if (code(error) !== 'EEXIST' || attempt >= 8) throw error;
    }
  }
}

function refuseOver(path: string, now: Entry | undefined, options: ReplaceOptions): void {
  if (options.unchanged && (!now || !same(options.unchanged, now))) {
    throw new PathRefused('changed', path, `${path} changed while rune was writing it: refused`);
  }
  if (!now) return;
  if (now.kind === 'dir' || (options.over !== 'any' && now.kind !== 'file'))
    throw kindRefused(path, now.kind);
}

/** Renames `from` to `to` (both below `root`); `noReplace`: fail with EEXIST rather than replace. */
export function renameWithin(
  root: Root,
  from: string,
  to: string,
  options: { noReplace?: boolean } = {},
): void {
  const source = root.parentOf(from);
  try {
    const target = root.parentOf(to);
    try {
      root.sys.renameAt(
        source.dir,
        source.name,
        target.dir,
        target.name,
        options.noReplace ? RENAME_NOREPLACE : 0,
      );
    } finally {
      target.done();
    }
  } finally {
    source.done();
  }
}

/** Removes the entry `rel` that is not a folder: a link is removed itself, never its target. */
export function removeEntry(root: Root, rel: string): void {
  const { dir, name, done } = root.parentOf(rel);
  try {
    const st = root.sys.statAt(dir, name);
    if (st.kind === 'dir') throw kindRefused(root.where(rel), 'dir');
    root.sys.unlinkAt(dir, name, false);
  } finally {
    done();
  }
}

/**
 * Removes `rel` and everything below it, folder by folder through descriptors: links are removed,
 * never followed, and a folder on another device (a mount) is left alone. Returns what was left,
 * one line each (empty when everything went).
 */
export function removeTree(root: Root, rel: string): string[] {
  const left: string[] = [];
  const { dir, name, done } = root.parentOf(rel, O_RDONLY | O_DIRECTORY);
  try {
    const st = statOrNone(root, dir, name);
    if (!st) return left;
    if (st.kind !== 'dir') root.sys.unlinkAt(dir, name, false);
    else removeFolder(root, dir, name, root.where(rel), st.dev, 0, left);
  } catch (error) {
    left.push(`${root.where(rel)}: ${(error as Error).message}`);
  } finally {
    done();
  }
  return left;
}

/**
 * removeTree for a folder of rune's own named by its absolute path (a temporary folder it made in
 * the system's tmp, which a command may have filled): the parent is opened from its real path, the
 * folder removed below it by descriptor. Returns what was left, as removeTree.
 */
export function removeFolderAt(path: string): string[] {
  let parent: Root;
  try {
    parent = Root.open(realpathSync(dirname(path)));
  } catch (error) {
    return [`${path}: ${(error as Error).message}`];
  }
  try {
    return removeTree(parent, basename(path));
  } finally {
    parent.close();
  }
}

function removeFolder(
  root: Root,
  parent: number,
  name: string,
  path: string,
  dev: number,
  depth: number,
  left: string[],
): void {
  if (depth > MAX_DEPTH) {
    left.push(`${path}: deeper than ${MAX_DEPTH} folders, not removed`);
    return;
  }
  const { sys } = root;
  let fd: number;
  try {
    fd = sys.resolve(parent, name, O_RDONLY | O_DIRECTORY);
  } catch (error) {
    // Swapped for a link or a file since the listing: that entry goes, not what it leads to.
    if (code(error) === 'ELOOP' || code(error) === 'ENOTDIR') unlinkOrNote(root, parent, name, path, left);
    else left.push(`${path}: ${code(error) ?? (error as Error).message}`);
    return;
  }
  try {
    if (sys.statAt(fd, '').dev !== dev) {
      left.push(`${path}: another file system is mounted there; not removed`);
      return;
    }
    for (const entry of sys.list(fd)) {
      const child = `${path}/${entry.name}`;
      const kind = entry.kind === 'unknown' ? statOrNone(root, fd, entry.name)?.kind : entry.kind;
      if (kind === 'dir') removeFolder(root, fd, entry.name, child, dev, depth + 1, left);
      else if (kind) unlinkOrNote(root, fd, entry.name, child, left);
    }
  } finally {
    sys.close(fd);
  }
  try {
    sys.unlinkAt(parent, name, true);
  } catch (error) {
    if (code(error) !== 'ENOENT' && !left.some((line) => line.startsWith(`${path}/`)))
      left.push(`${path}: ${code(error) ?? (error as Error).message}`);
  }
}

function unlinkOrNote(root: Root, dir: number, name: string, path: string, left: string[]): void {
  try {
    root.sys.unlinkAt(dir, name, false);
  } catch (error) {
    if (code(error) === 'EISDIR') {
      left.push(`${path}: became a folder during the removal; not removed`);
    } else if (code(error) !== 'ENOENT') left.push(`${path}: ${code(error) ?? (error as Error).message}`);
  }
}

/** Sets the permissions of the regular file `rel` through its descriptor (a link is refused). */
export function changeMode(root: Root, rel: string, mode: number): void {
  const { fd } = root.openFile(rel);
  try {
    fchmodSync(fd, mode);
  } finally {
    root.sys.close(fd);
  }
}
