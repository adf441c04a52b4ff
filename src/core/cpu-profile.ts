// RUNE_CPU_PROFILE=FILE: a V8 CPU profile of this run, written at exit (open it in Chrome's DevTools
// or speedscope). Inside the single executable NODE_OPTIONS=--cpu-prof is refused, and a profile of
// the bundles under plain node has no code cache, so it misjudges what a start costs.
import { writeFileSync } from 'node:fs';

interface InspectorSession {
  connect(): void;
  post(method: string, params: object, callback: (error: Error | null, result?: unknown) => void): void;
}

let session: InspectorSession | undefined;

/** Starts profiling when RUNE_CPU_PROFILE names a file; a no-op otherwise. */
export function startCpuProfile(env: NodeJS.ProcessEnv = process.env): void {
  if (!env.RUNE_CPU_PROFILE || session) return;
  const { Session } = process.getBuiltinModule('node:inspector') as {
    Session: new () => InspectorSession;
  };
  session = new Session();
  session.connect();
  // A sample every 100 µs: a start is short, and the default 1 ms interval would show little of it.
  session.post('Profiler.enable', {}, () => {});
  session.post('Profiler.setSamplingInterval', { interval: 100 }, () => {});
  session.post('Profiler.start', {}, () => {});
}

/** Stops profiling and writes the profile (the main thread's inspector answers synchronously). */
export function stopCpuProfile(env: NodeJS.ProcessEnv = process.env): void {
  const file = env.RUNE_CPU_PROFILE;
  if (!session || !file) return;
  session.post('Profiler.stop', {}, (error, result) => {
    if (error) process.stderr.write(`rune: RUNE_CPU_PROFILE: ${error.message}\n`);
    else writeFileSync(file, JSON.stringify((result as { profile: unknown }).profile));
  });
  session = undefined;
}
