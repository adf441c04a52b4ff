// A folder held by descriptor, and every path below it resolved from that descriptor: never through a
// symbolic link, never blocking on a FIFO (O_NONBLOCK), and only a regular file or a folder acted
// on. The reads are here; the changes (create, replace, rename, remove) are in change.ts.
import { constants, openSync, readSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { kindRefused, linkRefused, movedRefused, PathRefused } from './refused.ts';
import { type Entry, type FdSys, fdSys, isComponent, type Kind, type Listed, O_PATH } from './sys.ts';

const { O_RDONLY, O_DIRECTORY, O_NONBLOCK } = constants;
const DIR_PATH = O_PATH | O_DIRECTORY;

const code = (error: unknown) => (error as NodeJS.ErrnoException).code;

/** `a/b/c` → ['a', 'b', 'c']; '' is the root itself. A `..`, `.`, empty or absolute part is refused. */
export function parts(rel: string): string[] {
  if (rel === '') return [];
  const split = rel.split('/');
  if (isAbsolute(rel) || !split.every(isComponent)) {
    throw new PathRefused('kind', rel, `${rel} is not a path inside the folder: refused`);
  }
  return split;
}

/** A file opened for reading, with what fstat said of it. */
export interface OpenFile {
  fd: number;
  entry: Entry;
}

let systemRoot: Root | undefined;

export class Root {
  /** Absolute path, for messages and for verify(). */
  readonly path: string;
  readonly dev: number;
  readonly ino: number;
  readonly sys: FdSys;
  #fd: number;

  /** Takes over `fd` (an open folder) whose path is `path`. */
  constructor(fd: number, path: string, sys: FdSys = fdSys()) {
    this.sys = sys;
    const st = sys.statAt(fd, '');
    if (st.kind !== 'dir') {
      sys.close(fd);
      throw kindRefused(path, st.kind);
    }
    this.#fd = fd;
    this.path = path;
    this.dev = st.dev;
    this.ino = st.ino;
  }

  /** The file system's root, opened once per process. */
  static system(): Root {
    if (!systemRoot) {
      // '/' cannot be a link: opening it by name is the one open without a parent descriptor.
      systemRoot = new Root(openSync('/', DIR_PATH), '/');
    }
    return systemRoot;
  }

  /** Opens the folder at absolute `path` from '/', through no link (every component is checked). */
  static open(path: string): Root {
    if (!isAbsolute(path)) throw new PathRefused('kind', path, `${path} is not an absolute path: refused`);
    const system = Root.system();
    if (path === '/') return system;
    return system.openDir(path.slice(1).replace(/\/+$/, ''));
  }

  get fd(): number {
    if (this.#fd < 0) throw new Error(`${this.path}: used after close`);
    return this.#fd;
  }

  /** The absolute path of `rel` below this folder. */
  where(rel: string): string {
    if (rel === '') return this.path;
    return this.path === '/' ? `/${rel}` : `${this.path}/${rel}`;
  }

  /** Throws unless `path` still leads, through no link, to this very folder (device and inode). */
  verify(): void {
    if (this === systemRoot) return;
    let now: Entry;
    try {
      const fd = Root.system().resolveIn(this.path.slice(1), DIR_PATH);
      try {
        now = this.sys.statAt(fd, '');
      } finally {
        this.sys.close(fd);
      }
    } catch (error) {
      if (error instanceof PathRefused) throw movedRefused(this.path, `${error.path} is now a link`);
      throw movedRefused(
        this.path,
        `now ${code(error) === 'ENOENT' ? 'gone' : (code(error) ?? 'unreadable')}`,
      );
    }
    if (now.dev !== this.dev || now.ino !== this.ino)
      throw movedRefused(this.path, 'another folder is there now');
  }

  /**
   * Opens `rel` with `flags` (O_NOFOLLOW, O_CLOEXEC added; O_NONBLOCK too unless O_PATH). A link on
   * the way is refused by name; ENOENT and the like are thrown as they are (with `code`).
   */
  resolveIn(rel: string, flags: number, mode = 0): number {
    const names = parts(rel);
    const path = names.length === 0 ? '.' : names.join('/');
    const extra = flags & O_PATH ? 0 : O_NONBLOCK;
    try {
      return this.sys.resolve(this.fd, path, flags | extra, mode);
    } catch (error) {
      // O_DIRECTORY on a trailing link says ENOTDIR: a link is named as a link either way.
      const link =
        code(error) === 'ELOOP' || code(error) === 'ENOTDIR' ? this.linkOnTheWay(names) : undefined;
      if (link !== undefined || code(error) === 'ELOOP') throw linkRefused(this.where(link ?? rel));
      if (code(error) === 'EXDEV') throw movedRefused(this.where(rel), 'it left the folder');
      throw error;
    }
  }

  /** Which prefix of `names` is a link now (for the message), if one is. */
  private linkOnTheWay(names: readonly string[]): string | undefined {
    let dir = this.fd;
    try {
      for (let i = 0; i < names.length; i++) {
        const name = names[i] as string;
        if (this.sys.statAt(dir, name).kind === 'symlink') return names.slice(0, i + 1).join('/');
        if (i === names.length - 1) return undefined;
        const next = this.sys.resolve(dir, name, DIR_PATH);
        if (dir !== this.fd) this.sys.close(dir);
        dir = next;
      }
    } catch {
      // Changed again meanwhile: the whole path is named.
    } finally {
      if (dir !== this.fd) this.sys.close(dir);
    }
    return undefined;
  }

  /** A folder below this one, held by its own descriptor. */
  openDir(rel: string): Root {
    if (rel === '') return new Root(this.sys.resolve(this.fd, '.', DIR_PATH), this.path, this.sys);
    let fd: number;
    try {
      fd = this.resolveIn(rel, DIR_PATH);
    } catch (error) {
      if (code(error) === 'ENOTDIR') throw kindRefused(this.where(rel), this.stat(rel)?.kind ?? 'unknown');
      throw error;
    }
    return new Root(fd, this.where(rel), this.sys);
  }

  /** What is at `rel` (a link itself, never its target), or undefined when nothing is. */
  stat(rel: string): Entry | undefined {
    const names = parts(rel);
    if (names.length === 0) return this.sys.statAt(this.fd, '');
    try {
      return this.sys.statPath(this.fd, names.join('/'));
    } catch (error) {
      if (code(error) === 'ELOOP') throw linkRefused(this.where(this.linkOnTheWay(names) ?? rel));
      throw error;
    }
  }

  /**
   * Opens a regular file for reading (`flags` may add O_WRONLY/O_RDWR). A FIFO, socket, device or
   * folder there is refused after the open, which O_NONBLOCK keeps from blocking.
   */
  openFile(rel: string, flags = O_RDONLY): OpenFile {
    // Looked at first: opening a device can act (a tape rewinds, a watchdog arms), a socket fails.
    const before = this.stat(rel);
    if (before && before.kind !== 'file') throw kindRefused(this.where(rel), before.kind);
    const fd = this.resolveIn(rel, flags);
    let entry: Entry;
    try {
      entry = this.sys.statAt(fd, '');
    } catch (error) {
      this.sys.close(fd);
      throw error;
    }
    if (entry.kind !== 'file') {
      this.sys.close(fd);
      throw kindRefused(this.where(rel), entry.kind);
    }
    return { fd, entry };
  }

  /** A regular file's bytes, up to `max` (then `cut` is set). */
  readFile(rel: string, max = 64 * 1024 * 1024): { bytes: Buffer; entry: Entry; cut: boolean } {
    const { fd, entry } = this.openFile(rel);
    try {
      return { ...readAll(fd, max), entry };
    } finally {
      this.sys.close(fd);
    }
  }

  /** A regular file's text, or null when nothing (or not a regular file) is there. */
  readText(rel: string, encoding: BufferEncoding = 'utf8', max?: number): string | null {
    try {
      return this.readFile(rel, max).bytes.toString(encoding);
    } catch (error) {
      if (error instanceof PathRefused || code(error)) return null;
      throw error;
    }
  }

  /** The entries of the folder `rel` (not . and ..), with their kinds as the listing gives them. */
  list(rel = ''): Listed[] {
    const fd = this.resolveIn(rel === '' ? '' : rel, O_RDONLY | O_DIRECTORY);
    try {
      return this.sys
        .list(fd)
        .map((item) =>
          item.kind === 'unknown' ? { name: item.name, kind: this.kindAt(fd, item.name) } : item,
        );
    } finally {
      this.sys.close(fd);
    }
  }

  private kindAt(dirFd: number, name: string): Kind {
    try {
      return this.sys.statAt(dirFd, name).kind;
    } catch {
      return 'unknown';
    }
  }

  /** Where the link at `rel` points (the link is read, never followed). */
  readLink(rel: string): string {
    const names = parts(rel);
    const name = names.pop();
    if (name === undefined) throw kindRefused(this.path, 'dir');
    const dir = names.length === 0 ? this.fd : this.resolveIn(names.join('/'), DIR_PATH);
    try {
      return this.sys.readlinkAt(dir, name);
    } finally {
      if (dir !== this.fd) this.sys.close(dir);
    }
  }

  /** Opens the folder that holds `rel` (O_PATH, or `flags`), and gives the last name. */
  parentOf(rel: string, flags = DIR_PATH): { dir: number; name: string; done(): void } {
    const names = parts(rel);
    const name = names.pop();
    if (name === undefined)
      throw new PathRefused('kind', this.path, `${this.path}: a folder's own entry is not below it`);
    const dir =
      names.length === 0 && flags === DIR_PATH ? this.fd : this.resolveIn(names.join('/') || '', flags);
    return { dir, name, done: () => dir !== this.fd && this.sys.close(dir) };
  }

  close(): void {
    if (this === systemRoot || this.#fd < 0) return;
    this.sys.close(this.#fd);
    this.#fd = -1;
  }
}

/** Reads an open file to its end, up to `max` bytes (files in /proc say size 0 and have content). */
export function readAll(fd: number, max: number): { bytes: Buffer; cut: boolean } {
  const chunks: Buffer[] = [];
  let read = 0;
  while (read < max) {
    const chunk = Buffer.allocUnsafe(Math.min(64 * 1024, max - read));
    const n = readSync(fd, chunk, 0, chunk.length, read);
    if (n === 0) break;
    chunks.push(chunk.subarray(0, n));
    read += n;
  }
  const cut = read >= max && readSync(fd, Buffer.alloc(1), 0, 1, read) > 0;
  return { bytes: Buffer.concat(chunks, read), cut };
}
