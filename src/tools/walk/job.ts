// One search_files or find_files job: plain data in, events out, run synchronously on top of the
// walk. The same code runs in the walk worker (src/tools/walk/worker.ts) and, in unit tests, inline.
import { relative } from 'node:path';
import picomatch from 'picomatch';
import type { SandboxMode } from '../../config/schema.ts';
import { isUnder } from '../../core/paths.ts';
import type { ProtectedPaths } from '../../policy/types.ts';
import type { LayerReport } from '../../sandbox/types.ts';
import { type FolderOps, folderOps } from './folder-ops.ts';
import { PathGuard } from './guard.ts';
import type { IgnoreRules } from './ignore-rules.ts';
import { BINARY_SNIFF, compileMatcher, type ResultLine, scanBuffer } from './scan.ts';
import { emptyStats, openEntry, rulesAbove, type WalkStats, walk } from './walk.ts';

/** Files larger than this are not searched (said in the result). */
export const MAX_SEARCH_FILE_BYTES = 4 * 1024 * 1024;
/** find_files stops collecting here (it sorts by time, so it cannot stop at the first results). */
export const MAX_FOUND = 50_000;

interface JobBase {
  /** Canonical absolute folder or file to walk. */
  root: string;
  /** Canonical working directory: paths under it are shown relative to it. */
  cwd: string;
  protectedPaths: ProtectedPaths;
  /** sandbox.mode: whether the worker confines its thread with Landlock, and must. */
  sandboxMode: SandboxMode;
}

export interface SearchJob extends JobBase {
  kind: 'search';
  pattern: string;
  caseInsensitive: boolean;
  include?: string;
  context: number;
  maxResults: number;
  /**
   * This thread's share when several threads search one tree (runner.ts): each walks the whole
   * tree but reads only the files whose index in walk order is `part` modulo `parts`.
   */
  share?: { part: number; parts: number };
}

export interface FindJob extends JobBase {
  kind: 'find';
  /** A glob relative to root, without a fixed folder prefix (the tool moved that into root). */
  pattern: string;
}

export type WalkJob = SearchJob | FindJob;

export interface FoundFile {
  path: string;
  mtimeMs: number;
}

export type JobEvent =
  /** `seq`: the file's index in walk order (the order of the results when shares are merged). */
  | { type: 'file'; seq: number; path: string; lines: ResultLine[]; matches: number }
  | { type: 'found'; files: FoundFile[] }
  | { type: 'layers'; layers: LayerReport[] }
  | { type: 'done'; stats: WalkStats; stopped: boolean }
  | { type: 'error'; message: string };

/** What a thread does between reading what the walk needs up front and walking (the worker applies Landlock). */
export type BeforeWalk = (guard: PathGuard, root: string) => LayerReport[] | undefined;

function displayPath(path: string, cwd: string): string {
  return isUnder(path, cwd) ? relative(cwd, path) || '.' : path;
}

/** A glob test the way find_files and `include` document it: no slash → the file name at any depth. */
export function globTest(pattern: string): (rel: string) => boolean {
  const test = picomatch(pattern, { dot: true });
  if (pattern.includes('/')) return test;
  return (rel) => test(rel.slice(rel.lastIndexOf('/') + 1));
}

export function runJob(job: WalkJob, emit: (event: JobEvent) => void, beforeWalk?: BeforeWalk): void {
  // What the walk counts (folders, links, ignored entries, every file) apart from what reading the
  // files counts, so that the shares of one tree add up (only the first share reports the walk's).
  const stats = emptyStats();
  const fileStats = emptyStats();
  const guard = new PathGuard(job.protectedPaths, job.root);
  const ops = folderOps();
  try {
    const rules = rulesAbove(job.root, guard, ops);
    const layers = beforeWalk?.(guard, job.root);
    if (layers) emit({ type: 'layers', layers });
    const walker = { guard, ops, rules, stats, fileStats };
    const stopped = job.kind === 'search' ? search(job, walker, emit) : find(job, walker, emit);
    const first = job.kind === 'find' || (job.share?.part ?? 0) === 0;
    emit({ type: 'done', stats: first ? addStats(stats, fileStats) : fileStats, stopped });
  } catch (error) {
    emit({ type: 'error', message: (error as Error).message });
  }
}

/** The sum of two counts. */
export function addStats(a: WalkStats, b: WalkStats): WalkStats {
  const sum = { ...a };
  for (const key of Object.keys(b) as Array<keyof WalkStats>) sum[key] += b[key];
  return sum;
}

/** What every walk of a job shares. */
interface Walker {
  guard: PathGuard;
  ops: FolderOps;
  rules: IgnoreRules;
  /** The walk's own counts. */
  stats: WalkStats;
  /** What opening and reading files counts. */
  fileStats: WalkStats;
}

function search(job: SearchJob, walker: Walker, emit: (event: JobEvent) => void): boolean {
  const { guard, ops, fileStats: stats } = walker;
  const { part, parts } = job.share ?? { part: 0, parts: 1 };
  const matcher = compileMatcher(job.pattern, job.caseInsensitive);
  const include = job.include ? globTest(job.include) : undefined;
  const buffer = Buffer.allocUnsafe(MAX_SEARCH_FILE_BYTES);
  let budget = job.maxResults;
  let stopped = false;
  let seq = -1;
  walk({
    ...walker,
    root: job.root,
    onFile(entry) {
      seq++;
      if (seq % parts !== part) return false;
      if (include && !include(entry.rel)) return false;
      const file = openEntry(entry, guard, stats, MAX_SEARCH_FILE_BYTES, ops);
      if (!file) return false;
      let length: number;
      try {
        // The first read stops where git stops looking for a NUL: a binary file is not read on.
        length = ops.readClose(file.fd, buffer, file.size, BINARY_SNIFF);
      } catch {
        stats.unreadable++;
        return false;
      }
      const outcome = scanBuffer(buffer.subarray(0, length), matcher, job.context, budget);
      if (outcome.kind === 'binary') stats.binary++;
      if (outcome.kind !== 'lines') return false;
      emit({
        type: 'file',
        seq,
        path: displayPath(entry.path, job.cwd),
        lines: outcome.lines,
        matches: outcome.matches,
      });
      budget -= outcome.matches;
      if (budget <= 0) stopped = true;
      return stopped;
    },
  });
  return stopped;
}

function find(job: FindJob, walker: Walker, emit: (event: JobEvent) => void): boolean {
  const { guard, ops, fileStats: stats } = walker;
  const test = globTest(job.pattern);
  const sniff = Buffer.allocUnsafe(BINARY_SNIFF);
  const found: FoundFile[] = [];
  let stopped = false;
  walk({
    ...walker,
    root: job.root,
    onFile(entry) {
      if (!test(entry.rel)) return false;
      // The files search_files would search: text files within the size cap (the same walk).
      const file = openEntry(entry, guard, stats, MAX_SEARCH_FILE_BYTES, ops);
      if (!file) return false;
      let binary: boolean;
      try {
        const length = ops.readClose(file.fd, sniff, Math.min(sniff.length, file.size), 0);
        binary = sniff.subarray(0, length).includes(0);
      } catch {
        stats.unreadable++;
        return false;
      }
      if (binary) {
        stats.binary++;
        return false;
      }
      found.push({ path: displayPath(entry.path, job.cwd), mtimeMs: file.mtimeMs });
      if (found.length >= MAX_FOUND) stopped = true;
      return stopped;
    },
  });
  emit({ type: 'found', files: found });
  return stopped;
}
