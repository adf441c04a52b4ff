// The walk worker's entry (bundled on its own as js/walk-worker.cjs): reads what the walk needs
// from outside its root, confines this thread with Landlock to the root minus what the policy
// protects, then walks and posts the results. The main thread terminates it on a time limit, which
// also ends a regular expression that backtracks for ever (V8's linear-engine fallback is a
// process-wide flag that would also invalidate rune's code caches, so it is not used).
import { parentPort, workerData } from 'node:worker_threads';
import { devAssets } from '../../core/assets.ts';
import { useFdRegistry } from './folder-ops.ts';
import { runJob } from './job.ts';
import type { WorkerData } from './runner.ts';
import { confineThread } from './thread-landlock.ts';

const data = workerData as WorkerData;
if (data.assetDir) devAssets.dir = data.assetDir;
useFdRegistry(data.fds);
runJob(
  data.job,
  (event) => parentPort?.postMessage(event),
  (guard, root) => confineThread(guard, root, data.job.sandboxMode),
);
