// Runs the built binary the way users and Concourse do. RUNE_BIN points at another build
// (helpers building in parallel use their own output folder); the default is dist/rune.
import { type SpawnOptions, spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const RUNE_BIN = resolve(process.env.RUNE_BIN ?? join(import.meta.dirname, '../../dist/rune'));

export function requireBinary(): string {
  if (!existsSync(RUNE_BIN)) throw new Error(`${RUNE_BIN} is missing: run npm run build first`);
  return RUNE_BIN;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions extends SpawnOptions {
  input?: string;
  /** Kill the process after this many ms (default 30 s). */
  timeoutMs?: number;
  /** Called with the pid of what was spawned, once it runs. */
  started?: (pid: number) => void;
}

export function run(file: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  const { input, timeoutMs = 30_000, started, ...spawnOptions } = options;
  return new Promise((resolvePromise, reject) => {
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'], ...spawnOptions });
    if (child.pid !== undefined) started?.(child.pid);
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
    child.stdin?.end(input ?? '');
  });
}

/** Runs dist/rune with a clean environment and an empty HOME unless `env` says otherwise. */
export function runRune(args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  return run(requireBinary(), args, { ...options, env: { ...cleanEnv(), ...options.env } });
}

export function tempDir(prefix = 'rune-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A minimal environment: no inherited API keys, a fresh HOME. */
export function cleanEnv(home = tempDir('rune-home-')): NodeJS.ProcessEnv {
  return { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8' };
}
