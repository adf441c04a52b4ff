// Runs a walk job off the main thread: in a worker built from its own bundle (js/walk-worker.cjs),
// so a long walk never stalls the session or the notes server, a regular expression that
// backtracks for ever is stopped by terminating the worker, and the worker thread can confine
// itself with Landlock. A search runs in two such workers where there are two cores, each reading
// its share of the files (shares.ts merges them in walk order). Outside a build (unit tests run the
// TypeScript sources) the job runs inline.
// biome-ignore lint/style/noRestrictedImports: looks for rune's own worker bundle in a development build's asset folder
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { devAssetDir, isSea, readAssetText } from '../../core/assets.ts';
import { idleCores } from '../../core/idle-cores.ts';
import type { LayerReport } from '../../sandbox/types.ts';
import { closeLeftovers, newFdRegistry } from './folder-ops.ts';
import { addStats, type FoundFile, type JobEvent, runJob, type WalkJob } from './job.ts';
import type { ResultLine } from './scan.ts';
import { mergeShares, type SharedFile } from './shares.ts';
import { emptyStats, type WalkStats } from './walk.ts';

export const WORKER_ASSET = 'js/walk-worker.cjs';
/** At most this many threads search one tree (each is a V8 isolate and a 4 MiB read buffer). */
const MAX_SHARES = 2;

export interface JobResult {
  files: Array<{ path: string; lines: ResultLine[]; matches: number }>;
  found: FoundFile[];
  stats: WalkStats;
  /** The job stopped at its cap (results, or collected files). */
  stopped: boolean;
  /** The time limit ended it: what it found until then is kept. */
  timedOut: boolean;
  cancelled: boolean;
  layers: LayerReport[];
  /** The threads that walked (a search takes a second where a core is idle). */
  threads: number;
  error?: string;
}

export interface WorkerData {
  job: WalkJob;
  /** Where a development build's assets are (the worker has its own globals). */
  assetDir: string | undefined;
  /** The descriptors the worker holds through the addon (see folder-ops.ts). */
  fds: Int32Array;
}

type WorkerSource = { code: string } | { file: string } | undefined;

function workerSource(): WorkerSource {
  if (isSea()) return { code: readAssetText(WORKER_ASSET) };
  const dir = devAssetDir();
  if (dir && existsSync(join(dir, WORKER_ASSET))) return { file: join(dir, WORKER_ASSET) };
  return undefined;
}

function collector() {
  const result: JobResult = {
    files: [],
    found: [],
    stats: emptyStats(),
    stopped: false,
    timedOut: false,
    cancelled: false,
    layers: [],
    threads: 1,
  };
  const shared: SharedFile[] = [];
  // Each share's events; the layer report of the first share, or of one whose confinement failed.
  const take = (event: JobEvent, part = 0): void => {
    switch (event.type) {
      case 'file':
        shared.push(event);
        break;
      case 'found':
        result.found.push(...event.files);
        break;
      case 'layers':
        if (part === 0 || event.layers.some((layer) => !layer.applied)) result.layers = event.layers;
        break;
      case 'done':
        result.stats = addStats(result.stats, event.stats);
        result.stopped ||= event.stopped;
        break;
      case 'error':
        result.error ??= event.message;
        break;
    }
  };
  /** The result, the shares' files merged in walk order (shares.ts). */
  const end = (job: WalkJob): JobResult => {
    if (job.kind !== 'search') return result;
    const merged = mergeShares(shared, job.maxResults, job.context);
    return { ...result, files: merged.files, stopped: merged.stopped };
  };
  return { result, take, end };
}

/**
 * Threads for one search: a second where a core is idle now. Each thread walks the whole tree (the
 * listings are the cheap part) and reads its share of the files, so a second thread costs CPU
 * that only an idle core gives back as time (bench/tools.mjs).
 */
function shareCount(): number {
  return Math.min(MAX_SHARES, 1 + idleCores());
}

export interface RunOptions {
  signal: AbortSignal;
  timeoutMs: number;
  /** Threads for a search, instead of what the machine's idle cores allow (tests). */
  shares?: number;
}

export async function runWalkJob(job: WalkJob, options: RunOptions): Promise<JobResult> {
  const { result, take, end } = collector();
  const source = workerSource();
  if (!source) {
    // Unit tests: the TypeScript sources have no worker bundle.
    runJob(job, take);
    return end(job);
  }
  if (options.signal.aborted) return { ...end(job), cancelled: true };
  const parts = job.kind === 'search' ? (options.shares ?? shareCount()) : 1;
  result.threads = parts;
  const workers = Array.from({ length: parts }, (_, part) =>
    startWorker(source, {
      job: parts > 1 && job.kind === 'search' ? { ...job, share: { part, parts } } : job,
      assetDir: devAssetDir(),
      fds: newFdRegistry(),
    }),
  );
  return await new Promise<JobResult>((resolve) => {
    let settled = false;
    let running = parts;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      resolve(end(job));
    };
    // A worker terminated mid-walk leaves the descriptors it opened through the addon open.
    const ended = (worker: (typeof workers)[number]) => {
      if (worker.ended) return;
      worker.ended = true;
      closeLeftovers(worker.data.fds);
      if (--running === 0) finish();
    };
    const stopAll = () => {
      for (const worker of workers) {
        void worker.thread.terminate().then(
          () => ended(worker),
          () => ended(worker),
        );
      }
    };
    const stop = (why: 'timedOut' | 'cancelled') => {
      result[why] = true;
      stopAll();
    };
    const onAbort = () => stop('cancelled');
    const timer = setTimeout(() => stop('timedOut'), options.timeoutMs);
    options.signal.addEventListener('abort', onAbort, { once: true });
    workers.forEach((worker, part) => {
      const { thread } = worker;
      thread.on('message', (event: JobEvent) => {
        take(event, part);
        if (event.type === 'done') {
          worker.done = true;
          void thread.terminate().then(
            () => ended(worker),
            () => ended(worker),
          );
        } else if (event.type === 'error') {
          worker.done = true;
          stopAll();
        }
      });
      thread.on('error', (error) => {
        result.error ??= `the search worker failed: ${error.message}`;
        stopAll();
        ended(worker);
      });
      thread.on('exit', () => {
        // Exited without a 'done' and nobody stopped it: out of memory, or killed.
        if (!worker.done && !result.timedOut && !result.cancelled) {
          result.error ??= 'the search worker stopped unexpectedly';
          stopAll();
        }
        ended(worker);
      });
    });
  });
}

interface RunningWorker {
  thread: Worker;
  data: WorkerData;
  /** It answered 'done' or 'error'. */
  done: boolean;
  /** It is gone and its descriptors are closed. */
  ended: boolean;
}

function startWorker(source: { code: string } | { file: string }, data: WorkerData): RunningWorker {
  const thread =
    'code' in source
      ? new Worker(source.code, { eval: true, workerData: data, stdout: true, stderr: true })
      : new Worker(source.file, { workerData: data, stdout: true, stderr: true });
  return { thread, data, done: false, ended: false };
}
