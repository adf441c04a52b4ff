// The checkpoints of one session as the run loop sees them: before a call that can write, what it
// could change is brought up to date (a folder's first look stores its files; changes someone else
// made since are recorded as such), and after it, what it changed is recorded against the call and
// its turn. Nothing here fails a tool call: a checkpoint that cannot be kept whole says so.
import type { RuneConfig } from '../../config/schema.ts';
import { Root } from '../../core/fd/index.ts';
import { Watcher } from '../../core/fd/watch.ts';
import type { Logger } from '../../core/logger.ts';
import { isUnder } from '../../core/paths.ts';
import { redact, redactValue } from '../../core/redact.ts';
import type { ProtectedPaths } from '../../policy/types.ts';
import type { ChatMessage } from '../../providers/types.ts';
import { folderOps } from '../../tools/walk/folder-ops.ts';
import { rulesAbove } from '../../tools/walk/walk.ts';
import { Budget } from './budget.ts';
import { type Capture, captureAt, type Stamp, sameStamp } from './capture.ts';
import { TrackFilter } from './filter.ts';
import { CheckpointStore, sha256Hex } from './store.ts';
import { FolderTracker } from './tracker.ts';
import { type Change, type Held, sameState } from './types.ts';
import { recoverUnfinished } from './undo.ts';
import { Warmup } from './warm.ts';

const MIB = 1024 * 1024;

/** What one call could change: folders (a command's writable grants) and single files. */
export interface CallScope {
  roots: string[];
  files: string[];
}

export interface CallCheckpoint {
  /** Paths the call changed. */
  changed: number;
  /** What could not be kept, one line each. */
  partial: string[];
}

export interface CheckpointsOptions {
  env: NodeJS.ProcessEnv;
  sessionId: string;
  cwd: string;
  config: RuneConfig;
  logger: Logger;
  /** false: no inotify, folders are scanned at every call (tests of that path). */
  watch?: boolean;
  /**
   * What the store must never hold; given, a call an earlier rune was stopped in is completed when
   * the store opens (else before the first call).
   */
  protectedPaths?: ProtectedPaths;
  /** Entries a tracked folder may hold (MAX_TRACKED unless a test says otherwise). */
  maxTracked?: number;
}

/**
 * The digest of a conversation's first `count` messages, as stored (secrets redacted), without a
 * leading system prompt (each run puts its own there): an undo checks the prefix is still there.
 */
export function messagesDigest(messages: readonly ChatMessage[], count = messages.length): string {
  const prefix = messages.slice(0, count);
  const shown = prefix[0]?.role === 'system' ? prefix.slice(1) : prefix;
  return sha256Hex(Buffer.from(JSON.stringify(redactValue(shown)), 'utf8'));
}

export class Checkpoints {
  readonly sessionId: string;
  readonly store: CheckpointStore;
  readonly #o: CheckpointsOptions;
  readonly #capture: Capture;
  readonly #budget: Budget;
  readonly #trackers = new Map<string, FolderTracker>();
  /** Single files (a file tool's, or a writable file grant) no tracked folder covers. */
  readonly #files = new Map<string, { held: Held | null; stamp: Stamp | undefined }>();
  readonly #watcher: Watcher | undefined;
  /** Folders too large to track (MAX_TRACKED): not looked at again. */
  readonly #untracked = new Set<string>();
  readonly #warmup = new Warmup((root, tracker, entries) => this.#adopt(root, tracker, entries));
  #protected: ProtectedPaths | undefined;
  #turn = 0;
  #call: { id: string; scope: CallScope; partial: string[] } | undefined;
  /** Problems already told (each once). */
  readonly #told = new Set<string>();

  constructor(options: CheckpointsOptions) {
    this.#o = options;
    this.sessionId = options.sessionId;
    const { max_mb, max_file_mb } = options.config.checkpoints;
    this.#budget = new Budget(options.env, options.sessionId, max_mb * MIB);
    this.store = CheckpointStore.open(options.env, options.sessionId, { create: true, limits: this.#budget });
    this.#capture = { store: this.store, maxFileBytes: max_file_mb * MIB };
    const watcher = options.watch === false ? 'inotify switched off' : Watcher.open();
    if (typeof watcher === 'string') {
      options.logger.debug('agent.checkpoint_no_watch', {
        message: `${watcher}; folders are scanned at each call`,
      });
    } else this.#watcher = watcher;
    if (this.store.records.length === 0)
      this.store.append({
        t: 'session',
        v: 1,
        id: options.sessionId,
        cwd: options.cwd,
        at: new Date().toISOString(),
      });
    for (const record of this.store.records)
      if (record.t === 'turn') this.#turn = Math.max(this.#turn, record.n);
    if (options.protectedPaths) this.#recover(options.protectedPaths);
  }

  /** A call an earlier rune was stopped in (kill -9) gets its changes before this one adds turns. */
  #recover(protectedPaths: ProtectedPaths): void {
    this.#protected ??= protectedPaths;
    const notes = recoverUnfinished(this.store, protectedPaths, this.#o.config.checkpoints.max_file_mb);
    for (const note of notes) this.#tell(note);
  }

  /** The number the next turn gets. */
  get nextTurn(): number {
    return this.#turn + 1;
  }

  /** A turn begins: `messages` is the conversation before its prompt. */
  beginTurn(prompt: string, messages: readonly ChatMessage[]): number {
    this.#turn += 1;
    this.store.append({
      t: 'turn',
      n: this.#turn,
      at: new Date().toISOString(),
      // What /rewind lists; secrets in it are masked like everything rune writes out.
      prompt: redact(prompt.replace(/\s+/g, ' ').trim()).slice(0, 80),
      messages: messages.length,
      digest: messagesDigest(messages),
    });
    return this.#turn;
  }

  /** Everything recorded is on disk once this resolves. */
  endTurn(): Promise<void> {
    return this.store.flush().catch((error) => {
      this.#tell(`checkpoints could not be written to disk: ${(error as Error).message}`);
    });
  }

  /** Before a call that can write: what it could change, as it is now. */
  before(id: string, tool: string, scope: CallScope, protectedPaths: ProtectedPaths): void {
    if (!this.#protected) this.#recover(protectedPaths);
    const partial: string[] = [];
    this.#call = { id, scope, partial };
    try {
      if (this.#turn === 0) this.beginTurn('', []);
      this.#warmup.finish();
      const seen = this.#look(partial);
      for (const root of scope.roots)
        if (!this.#trackers.has(root) && !this.#untracked.has(root)) this.#track(root, partial);
      for (const file of scope.files) {
        const change = this.#lookFile(file, partial);
        if (change) seen.push(change);
      }
      if (seen.length > 0) this.store.append({ t: 'seen', c: unique(seen) });
      this.store.append({ t: 'call', n: this.#turn, id, tool, roots: scope.roots, files: scope.files });
      // Written before the call runs: a rune killed during it leaves a checkpoint that restores.
      this.store.commit();
    } catch (error) {
      partial.push(`the checkpoint failed: ${(error as Error).message}`);
    }
  }

  /** After the call: what it changed, recorded against it. */
  after(id: string): CallCheckpoint {
    const call = this.#call?.id === id ? this.#call : undefined;
    this.#call = undefined;
    const partial = call?.partial ?? [];
    let changes: Change[] = [];
    try {
      changes = this.#look(partial);
      for (const file of call?.scope.files ?? []) {
        const change = this.#lookFile(file, partial);
        if (change) changes.push(change);
      }
      for (const change of changes) {
        const lost = lostContent(change);
        if (lost) partial.push(lost);
      }
      changes = unique(changes);
      if (changes.length > 0) this.store.append({ t: 'change', id, c: changes });
      this.store.append({ t: 'done', id, ...(partial.length > 0 ? { partial } : {}) });
      this.store.commit();
    } catch (error) {
      partial.push(`the checkpoint failed: ${(error as Error).message}`);
    }
    // Durable in the background: the model's next request takes far longer than a flush.
    void this.store.flush().catch(() => undefined);
    for (const line of partial) this.#tell(line);
    return { changed: changes.length, partial };
  }

  /** Changes in every tracked folder since the last look. */
  #look(partial: string[]): Change[] {
    const out: Change[] = [];
    // One queue for every folder: read once, each tracker (those still looking too) keeps its own.
    if (this.#watcher) {
      const events = this.#watcher.read();
      if (events.length > 0)
        for (const tracker of [...this.#trackers.values(), ...this.#warmup.trackers()]) tracker.take(events);
    }
    for (const tracker of this.#trackers.values()) {
      try {
        tracker.root.verify();
        out.push(...tracker.changes());
      } catch (error) {
        partial.push(`${tracker.path}: ${(error as Error).message}`);
      }
      partial.push(...tracker.problems.splice(0));
    }
    return out;
  }

  /**
   * Starts the first look of each folder in `roots` (real paths) in the background, so a call that
   * can write it later finds it done: the folders the session's runs may write.
   */
  warm(roots: readonly string[], protectedPaths: ProtectedPaths): void {
    if (!this.#protected) this.#recover(protectedPaths);
    const partial: string[] = [];
    for (const root of roots) {
      if (this.#trackers.has(root) || this.#warmup.has(root) || this.#untracked.has(root)) continue;
      const tracker = this.#newTracker(root, partial);
      if (tracker) this.#warmup.start(root, tracker);
    }
    for (const line of partial) this.#tell(line);
  }

  /** Starts tracking the folder `root` (a real path): its first look, now. */
  #track(root: string, partial: string[]): void {
    const tracker = this.#newTracker(root, partial);
    if (tracker) this.#adopt(root, tracker, tracker.baseline());
    partial.push(...(tracker?.problems.splice(0) ?? []));
  }

  /** A folder's first look is done: its entries are recorded, and its changes looked at from now. */
  #adopt(root: string, tracker: FolderTracker, entries: [string, Held][]): void {
    if (tracker.tooLarge) {
      this.#tell(tracker.tooLarge);
      this.#untracked.add(root);
      this.#drop(tracker);
      return;
    }
    // A folder inside another tracked one is tracked by both; each change is then recorded once.
    this.#trackers.set(root, tracker);
    for (let at = 0; at === 0 || at < entries.length; at += 2000)
      this.store.append({
        t: 'base',
        r: root,
        e: entries.slice(at, at + 2000),
        ...(at === 0 ? { fresh: true as const } : {}),
      });
    this.store.append({ t: 'based', r: root });
    this.store.commit();
  }

  /**
   * A tracker not kept: its watches go (a busy folder's events would fill the one queue and make
   * every tracked folder scan), except those another tracked folder shares (a grant inside it).
   */
  #drop(tracker: FolderTracker): void {
    const others = [...this.#trackers.values(), ...this.#warmup.trackers()].filter((t) => t !== tracker);
    const shared = new Set(others.flatMap((other) => other.watches));
    for (const wd of tracker.watches) if (!shared.has(wd)) this.#watcher?.remove(wd);
    tracker.root.close();
  }

  /** The tracker of `root`, or undefined (with the reason in `partial`) when it cannot be tracked. */
  #newTracker(root: string, partial: string[]): FolderTracker | undefined {
    const filter = new TrackFilter(root, this.#protected!);
    const refused = filter.folderRefusal();
    if (refused) {
      partial.push(`${root} is not checkpointed: it is inside ${refused}`);
      return;
    }
    let opened: Root;
    try {
      opened = Root.open(root);
    } catch (error) {
      // A granted folder that does not exist (yet) holds nothing to keep.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
        partial.push(`${root} is not checkpointed: ${(error as Error).message}`);
      return;
    }
    return new FolderTracker({
      root: opened,
      filter,
      rules: rulesAbove(root, filter.guard, folderOps()),
      capture: this.#capture,
      watcher: this.#watcher,
      maxTracked: this.#o.maxTracked,
    });
  }

  /** A single file: its change since the last look, unless a tracked folder covers it. */
  #lookFile(path: string, partial: string[]): Change | undefined {
    for (const tracker of this.#trackers.values()) {
      if (
        isUnder(path, tracker.path) &&
        path !== tracker.path &&
        tracker.covers(path.slice(tracker.path.length + 1))
      )
        return undefined;
    }
    const slash = path.lastIndexOf('/');
    const parent = path.slice(0, slash) || '/';
    const name = path.slice(slash + 1);
    let dir: Root;
    try {
      dir = Root.open(parent);
    } catch {
      return this.#fileChange(path, parent, null, undefined);
    }
    try {
      const entry = dir.stat(name);
      const refused = new TrackFilter(parent, this.#protected!).fileRefusal(path, entry);
      if (refused) {
        partial.push(`${path} is not checkpointed: ${refused}`);
        return undefined;
      }
      if (!entry) return this.#fileChange(path, parent, null, undefined);
      const known = this.#files.get(path);
      if (sameStamp(known?.stamp, entry)) return undefined;
      return this.#fileChange(path, parent, captureAt(dir.sys, dir.fd, name, entry, this.#capture), entry);
    } finally {
      dir.close();
    }
  }

  #fileChange(path: string, parent: string, now: Held | null, stamp: Stamp | undefined): Change | undefined {
    const known = this.#files.get(path);
    this.#files.set(path, { held: now, stamp });
    if (!known) {
      // First sight: not a change, but what the file held is where an undo goes back to.
      if (now) this.store.append({ t: 'base', r: parent, e: [[path.slice(parent.length + 1), now]] });
      return undefined;
    }
    if (sameState(known.held, now)) return undefined;
    return { p: path, r: parent, was: known.held, now };
  }

  #tell(line: string): void {
    if (this.#told.has(line)) return;
    this.#told.add(line);
    this.#o.logger.warn('agent.checkpoint_partial', { message: line });
  }

  async close(): Promise<void> {
    for (const tracker of this.#warmup.stop()) tracker.root.close();
    this.#watcher?.close();
    for (const tracker of this.#trackers.values()) tracker.root.close();
    await this.store.close();
  }
}

/** One change per path: the first state before, the last after (nested grants see a change twice). */
function unique(changes: Change[]): Change[] {
  const byPath = new Map<string, Change>();
  for (const change of changes) {
    const known = byPath.get(change.p);
    byPath.set(change.p, known ? { ...known, now: change.now } : change);
  }
  return [...byPath.values()].filter((change) => !sameState(change.was, change.now));
}

/** A change whose content the store could not keep, in words; undefined when it was kept. */
function lostContent(change: Change): string | undefined {
  for (const held of [change.was, change.now]) {
    if (held?.k !== 'f' || held.x === undefined) continue;
    const why =
      held.x === 'large'
        ? 'it is larger than checkpoints.max_file_mb'
        : held.x === 'full'
          ? 'the checkpoint store is full (checkpoints.max_mb)'
          : 'it could not be read';
    return `${change.p}: not kept whole (${why})`;
  }
  return undefined;
}
