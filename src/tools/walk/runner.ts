// Runs a walk job off the main thread: in a worker built from its own bundle (js/walk-worker.cjs),
// so a long walk never stalls the session or the notes server, a regular expression that
// backtracks for ever is stopped by terminating the worker, and the worker thread can confine
// itself with Landlock. Outside a build (unit tests run the TypeScript sources) the job runs inline.
// biome-ignore lint/style/noRestrictedImports: looks for rune's own worker bundle in a development build's asset folder
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { devAssetDir, isSea, readAssetText } from '../../core/assets.ts';
import type { LayerReport } from '../../sandbox/types.ts';
import { closeLeftovers, newFdRegistry } from './folder-ops.ts';
import { type FoundFile, type JobEvent, runJob, type WalkJob } from './job.ts';
import type { ResultLine } from './scan.ts';
import { emptyStats, type WalkStats } from './walk.ts';

export const WORKER_ASSET = 'js/walk-worker.cjs';

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
  };
  const take = (event: JobEvent): void => {
    switch (event.type) {
      case 'file':
        result.files.push({ path: event.path, lines: event.lines, matches: event.matches });
        break;
      case 'found':
        result.found.push(...event.files);
        break;
      case 'layers':
        result.layers = event.layers;
        break;
      case 'done':
        result.stats = event.stats;
        result.stopped = event.stopped;
        break;
      case 'error':
        result.error = event.message;
        break;
    }
  };
  return { result, take };
}

export interface RunOptions {
  signal: AbortSignal;
  timeoutMs: number;
}

export async function runWalkJob(job: WalkJob, options: RunOptions): Promise<JobResult> {
  const { result, take } = collector();
  const source = workerSource();
  if (!source) {
    // Unit tests: the TypeScript sources have no worker bundle.
    runJob(job, take);
    return result;
  }
  if (options.signal.aborted) return { ...result, cancelled: true };
  const data: WorkerData = { job, assetDir: devAssetDir(), fds: newFdRegistry() };
  const worker =
    'code' in source
      ? new Worker(source.code, { eval: true, workerData: data, stdout: true, stderr: true })
      : new Worker(source.file, { workerData: data, stdout: true, stderr: true });
  return await new Promise<JobResult>((resolve) => {
    let settled = false;
    let ended = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      // A worker terminated mid-walk leaves the descriptors it opened through the addon open.
      closeLeftovers(data.fds);
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const stop = (why: 'timedOut' | 'cancelled') => {
      result[why] = true;
      void worker.terminate().then(finish, finish);
    };
    const onAbort = () => stop('cancelled');
    const timer = setTimeout(() => stop('timedOut'), options.timeoutMs);
    options.signal.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (event: JobEvent) => {
      take(event);
      if (event.type === 'done' || event.type === 'error') {
        ended = true;
        void worker.terminate().then(finish, finish);
      }
    });
    worker.on('error', (error) => {
      result.error ??= `the search worker failed: ${error.message}`;
      finish();
    });
    worker.on('exit', () => {
      // Exited without a 'done' and nobody stopped it: out of memory, or killed.
      if (!ended && !result.timedOut && !result.cancelled)
        result.error ??= 'the search worker stopped unexpectedly';
      finish();
    });
  });
}
