// One folder a command may write, tracked for checkpoints: its first look stores every tracked
// file (the content a later command may overwrite in place is gone by the time it ends), then
// inotify names the entries that changed, so a call costs what it changed, not the folder's size.
// Without inotify (no addon, the watch limit, a queue overflow) the folder is scanned and compared
// by lstat instead. Everything is opened below the pinned folder through no link (src/core/fd/).
import { constants } from 'node:fs';
import { type Entry, type Root, readAll } from '../../core/fd/index.ts';
import type { FdSys } from '../../core/fd/sys.ts';
import { IN, type WatchEvent, type Watcher } from '../../core/fd/watch.ts';
import type { IgnoreRules } from '../../tools/walk/ignore-rules.ts';
import { type Capture, captureAt, type Stamp, sameStamp } from './capture.ts';
import type { TrackFilter } from './filter.ts';
import { type Change, type Held, sameState } from './types.ts';

const { O_RDONLY, O_DIRECTORY, O_NONBLOCK } = constants;
const MAX_DEPTH = 256;
/**
 * Entries a tracked folder may hold. A grant as wide as a home folder would make the first look
 * copy everything in it; past this the folder is not tracked, and the person is told.
 */
export const MAX_TRACKED = 200_000;
/** Ignore files above this size are not read (ignore-rules.ts reads at most 1 MiB). */
const MAX_IGNORE_FILE = 1024 * 1024;

interface Tracked {
  held: Held;
  /** What lstat said when it was captured; undefined: look again whatever lstat says. */
  stamp: Stamp | undefined;
}

export interface TrackerOptions {
  root: Root;
  filter: TrackFilter;
  /** The ignore rules in force at the folder (from the folders above it). */
  rules: IgnoreRules;
  capture: Capture;
  watcher: Watcher | undefined;
  /** MAX_TRACKED unless a test says otherwise. */
  maxTracked?: number;
}

const join = (dir: string, name: string) => (dir === '' ? name : `${dir}/${name}`);
const parentOf = (rel: string) => rel.slice(0, Math.max(0, rel.lastIndexOf('/')));
const nameOf = (rel: string) => rel.slice(rel.lastIndexOf('/') + 1);

export class FolderTracker {
  readonly path: string;
  readonly root: Root;
  /** Every tracked entry below the folder, by relative path, as last looked at. */
  readonly index = new Map<string, Tracked>();
  /** Why the last look could not be whole (an unwatched folder, a too deep tree). */
  readonly problems: string[] = [];
  /** Set when the first look found more than MAX_TRACKED entries: the folder is not tracked. */
  tooLarge: string | undefined;
  readonly #maxTracked: number;
  readonly #o: TrackerOptions;
  readonly #sys: FdSys;
  readonly #dev: number;
  /** The ignore rules inside each tracked folder, fixed when rune first looked at it. */
  readonly #inside = new Map<string, IgnoreRules>();
  readonly #folderOf = new Map<number, string>();
  readonly #watchOf = new Map<string, number>();
  /** Some folder has no watch (or events were lost): the next look scans everything. */
  #rescan = false;
  /** Events about this folder's watches, read since the last look (take()). */
  #events: WatchEvent[] = [];

  constructor(options: TrackerOptions) {
    this.#o = options;
    this.root = options.root;
    this.path = options.root.path;
    this.#sys = options.root.sys;
    this.#dev = options.root.dev;
    this.#maxTracked = options.maxTracked ?? MAX_TRACKED;
    if (!options.watcher) this.#rescan = true;
  }

  /** The inotify watches this folder's look added. */
  get watches(): number[] {
    return [...this.#folderOf.keys()];
  }

  /** Whether inotify covers the whole folder (a look then costs what changed). */
  get watched(): boolean {
    return !this.#rescan;
  }

  /** The first look: every tracked entry, its file content stored. */
  baseline(): [string, Held][] {
    const steps = this.firstLook();
    for (;;) {
      const step = steps.next();
      if (step.done) return step.value;
    }
  }

  /** The first look a folder at a time (a warm-up runs it in slices while the model thinks). */
  *firstLook(): Generator<void, [string, Held][]> {
    const seen = new Map<string, Tracked>();
    yield* this.#walkSteps('', seen);
    if (seen.size > this.#maxTracked) {
      this.tooLarge = `${this.path} holds more than ${this.#maxTracked} files and folders that .gitignore does not ignore: commands' changes there are not checkpointed (narrow allowed_paths_rw)`;
      return [];
    }
    for (const [rel, tracked] of seen) this.index.set(rel, tracked);
    return [...seen].map(([rel, tracked]) => [rel, tracked.held]);
  }

  /**
   * Whether the entry `rel` (which may not exist yet) is one this folder tracks: its folder is
   * tracked and no rule leaves it out.
   */
  covers(rel: string): boolean {
    const rules = this.#inside.get(parentOf(rel));
    if (!rules) return false;
    const name = nameOf(rel);
    const entry = this.root.stat(rel);
    if (entry)
      return entry.dev === this.#dev && this.#o.filter.leftOut(rel, name, entry, rules) === undefined;
    const file = { kind: 'file', nlink: 1 } as Entry;
    return this.#o.filter.leftOut(rel, name, file, rules) === undefined;
  }

  /**
   * Keeps the events of `read` that are about this folder: one inotify queue serves every tracked
   * folder, so the recorder reads it once and hands each tracker the whole batch.
   */
  take(read: readonly WatchEvent[]): void {
    for (const event of read)
      if (event.mask & IN.Q_OVERFLOW || this.#folderOf.has(event.wd)) this.#events.push(event);
  }

  /** What changed since the last look (index updated; content of changed files stored). */
  changes(): Change[] {
    const out: Change[] = [];
    if (this.#rescan || !this.#o.watcher) {
      this.#rescan = !this.#o.watcher;
      this.#events = [];
      this.#settle('', true, out);
      return out;
    }
    const { paths, folders, overflow } = this.#drain();
    if (overflow) {
      this.problems.push(`${this.path}: too many changes at once for inotify; the folder was scanned`);
      this.#settle('', true, out);
      return out;
    }
    // Folders first (a moved folder's watches are re-mapped), then single entries not inside them.
    const sorted = [...folders].sort((a, b) => a.length - b.length);
    const done: string[] = [];
    for (const rel of sorted) {
      if (done.some((d) => rel === d || rel.startsWith(`${d}/`))) continue;
      this.#settle(rel, true, out);
      done.push(rel);
    }
    for (const rel of paths) {
      if (done.some((d) => rel === d || rel.startsWith(`${d}/`))) continue;
      this.#settle(rel, false, out);
    }
    return out;
  }

  /** Reads the queued events into the entries and folders to look at again. */
  #drain(): { paths: Set<string>; folders: Set<string>; overflow: boolean } {
    const paths = new Set<string>();
    const folders = new Set<string>();
    let overflow = false;
    const events = this.#events;
    this.#events = [];
    for (const event of events) {
      if (event.mask & IN.Q_OVERFLOW) overflow = true;
      const dir = this.#folderOf.get(event.wd);
      if (dir === undefined) continue;
      if (event.mask & IN.IGNORED) {
        this.#folderOf.delete(event.wd);
        if (this.#watchOf.get(dir) === event.wd) this.#watchOf.delete(dir);
        continue;
      }
      if (event.name === '') {
        if (dir !== '' && event.mask & (IN.DELETE_SELF | IN.MOVE_SELF)) folders.add(dir);
        continue;
      }
      const rel = join(dir, event.name);
      const structural = IN.CREATE | IN.DELETE | IN.MOVED_FROM | IN.MOVED_TO;
      if (event.mask & IN.ISDIR && event.mask & structural) folders.add(rel);
      else paths.add(rel);
    }
    return { paths, folders, overflow };
  }

  /**
   * Looks at `rel` again and records how it differs from the index: with `deep`, everything below
   * it too (a folder created, moved or removed); else the entry itself (a file written, a mode set).
   */
  #settle(rel: string, deep: boolean, out: Change[]): void {
    const seen = new Map<string, Tracked>();
    const old = this.index.get(rel);
    const now = rel === '' ? undefined : this.#look(rel);
    const isDir = rel === '' || now?.tracked.held.k === 'd';
    // A folder is walked when asked, or when it is new; what is not a folder now has nothing below.
    const walk = isDir && (rel === '' || deep || old?.held.k !== 'd');
    if (now) seen.set(rel, now.tracked);
    if (walk) this.#walk(rel, seen);
    const hadBelow = rel === '' || old?.held.k === 'd';
    const under = `${rel}/`;
    const before =
      hadBelow && (walk || !isDir)
        ? [...this.index.keys()].filter((key) => rel === '' || key === rel || key.startsWith(under))
        : old
          ? [rel]
          : [];
    for (const key of before) {
      if (seen.has(key)) continue;
      out.push(this.#change(key, this.index.get(key)!.held, null));
      this.index.delete(key);
      this.#forgetFolder(key);
    }
    for (const [key, tracked] of seen) {
      const known = this.index.get(key);
      this.index.set(key, tracked);
      if (!known || !sameState(known.held, tracked.held))
        out.push(this.#change(key, known?.held ?? null, tracked.held));
    }
  }

  #change(rel: string, was: Held | null, now: Held | null): Change {
    return { p: this.root.where(rel), r: this.path, was, now };
  }

  /** lstat of one entry and, when it changed since the index, what it holds now; undefined: gone or left out. */
  #look(rel: string): { tracked: Tracked } | undefined {
    const dirRel = parentOf(rel);
    const rules = this.#inside.get(dirRel);
    if (!rules) return undefined; // its folder is not tracked (left out, or gone)
    let dirFd: number;
    try {
      dirFd = this.root.resolveIn(dirRel, O_RDONLY | O_DIRECTORY);
    } catch {
      return undefined;
    }
    try {
      const name = nameOf(rel);
      let entry: Entry;
      try {
        entry = this.#sys.statAt(dirFd, name);
      } catch {
        return undefined;
      }
      if (entry.dev !== this.#dev || this.#o.filter.leftOut(rel, name, entry, rules)) return undefined;
      return { tracked: this.#capture(rel, dirFd, name, entry) };
    } finally {
      this.#sys.close(dirFd);
    }
  }

  /** The index's entry when its stamp still holds, else what the entry holds now. */
  #capture(rel: string, dirFd: number, name: string, entry: Entry): Tracked {
    const old = this.index.get(rel);
    if (old && sameStamp(old.stamp, entry)) return old;
    return { held: captureAt(this.#sys, dirFd, name, entry, this.#o.capture), stamp: entry };
  }

  /** Every tracked entry below the folder `rel` (which must be tracked) into `seen`, watching each folder. */
  #walk(rel: string, seen: Map<string, Tracked>): void {
    for (const _ of this.#walkSteps(rel, seen)) {
      // One folder per step.
    }
  }

  /** #walk one folder per step: the folder's watch first, so a change after its listing is an event. */
  *#walkSteps(start: string, seen: Map<string, Tracked>): Generator<void> {
    const stack: { rel: string; depth: number }[] = [{ rel: start, depth: 0 }];
    for (let next = stack.pop(); next; next = stack.pop()) {
      const { rel, depth } = next;
      if (depth > MAX_DEPTH) {
        this.problems.push(`${this.root.where(rel)}: deeper than ${MAX_DEPTH} folders, not tracked`);
        continue;
      }
      for (const child of this.#folder(rel, seen)) stack.push({ rel: child, depth: depth + 1 });
      if (seen.size > this.#maxTracked) return;
      yield;
    }
  }

  /** The tracked entries of one folder into `seen`; its subfolders. */
  #folder(rel: string, seen: Map<string, Tracked>): string[] {
    let fd: number;
    try {
      fd = this.root.resolveIn(rel, O_RDONLY | O_DIRECTORY);
    } catch {
      return []; // gone or swapped for a link since it was listed: its parent's look says what is there
    }
    try {
      this.#watch(rel, fd);
      const listed = this.#sys.list(fd);
      let rules = this.#inside.get(rel);
      if (!rules) {
        const above = rel === '' ? this.#o.rules : this.#inside.get(parentOf(rel));
        if (!above) return []; // its parent is not tracked
        const names = new Set(listed.map((item) => item.name));
        rules = above.enter(rel, names, (parts) => readSmall(this.#sys, fd, parts));
        this.#inside.set(rel, rules);
      }
      const folders: string[] = [];
      for (const { name } of listed) {
        const child = join(rel, name);
        let entry: Entry;
        try {
          entry = this.#sys.statAt(fd, name);
        } catch {
          continue;
        }
        if (entry.dev !== this.#dev || this.#o.filter.leftOut(child, name, entry, rules)) continue;
        seen.set(child, this.#capture(child, fd, name, entry));
        if (entry.kind === 'dir') folders.push(child);
      }
      return folders;
    } finally {
      this.#sys.close(fd);
    }
  }

  #watch(rel: string, fd: number): void {
    const watcher = this.#o.watcher;
    if (!watcher) return;
    try {
      const wd = watcher.addFd(fd);
      const old = this.#folderOf.get(wd);
      if (old !== undefined && old !== rel && this.#watchOf.get(old) === wd) this.#watchOf.delete(old);
      this.#folderOf.set(wd, rel);
      this.#watchOf.set(rel, wd);
    } catch (error) {
      if (!this.#rescan)
        this.problems.push(
          `${this.root.where(rel)}: no inotify watch (${(error as NodeJS.ErrnoException).code ?? error}); the folder is scanned at every call`,
        );
      this.#rescan = true;
    }
  }

  /**
   * A folder gone from the index: its watch no longer names it (a moved folder's comes back on its
   * walk). The watch itself stays: another tracked folder may share it (a grant inside a grant),
   * and the kernel drops it when the folder is removed.
   */
  #forgetFolder(rel: string): void {
    this.#inside.delete(rel);
    const wd = this.#watchOf.get(rel);
    if (wd === undefined) return;
    this.#watchOf.delete(rel);
    if (this.#folderOf.get(wd) === rel) this.#folderOf.delete(wd);
  }
}

/** A small ignore file below an open folder, read one component at a time through no link. */
function readSmall(sys: FdSys, dirFd: number, parts: readonly string[]): string | undefined {
  let fd: number;
  try {
    fd = sys.resolve(dirFd, parts.join('/'), O_RDONLY | O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = sys.statAt(fd, '');
    if (st.kind !== 'file' || st.size > MAX_IGNORE_FILE) return undefined;
    return readAll(fd, MAX_IGNORE_FILE).bytes.toString('utf8');
  } catch {
    return undefined;
  } finally {
    sys.close(fd);
  }
}
