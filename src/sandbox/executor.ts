// Runs tool processes for the agent, the tools and the MCP client: spawn in a new process group,
// cap output, kill the whole group on timeout or cancel, and report which sandbox layers applied.
import { spawn as spawnChild } from 'node:child_process';
import type { RuneConfig, SandboxMode } from '../config/schema.ts';
import { RuneError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type {
  LayerName,
  LayerReport,
  SandboxExecutor,
  SandboxedProcess,
  SandboxRequest,
  SandboxResult,
} from './types.ts';

export interface SandboxExecutorOptions {
  config: RuneConfig;
  logger: Logger;
  mode?: SandboxMode;
}

const ALL_LAYERS: LayerName[] = ['namespaces', 'network', 'dns', 'seccomp', 'landlock', 'cgroups', 'rlimits'];

function notBuilt(): LayerReport[] {
  return ALL_LAYERS.map((layer) => ({ layer, applied: false, detail: 'sandbox not built yet' }));
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

class CappedBuffer {
  private chunks: Buffer[] = [];
  private kept = 0;
  dropped = 0;
  constructor(private readonly cap: number) {}
  push(chunk: Buffer): void {
    const room = this.cap - this.kept;
    if (room <= 0) {
      this.dropped += chunk.length;
      return;
    }
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(part);
    this.kept += part.length;
    this.dropped += chunk.length - part.length;
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

export function createSandboxExecutor(options: SandboxExecutorOptions): SandboxExecutor {
  const { logger } = options;

  const run = (request: SandboxRequest): Promise<SandboxResult> => {
    const started = performance.now();
    const layers = notBuilt();
    return new Promise((resolve) => {
      const [file, ...args] = request.argv;
      if (!file) throw new RuneError('INTERNAL', 'sandbox: empty argv');
      const child = spawnChild(file, args, {
        cwd: request.cwd,
        env: request.env,
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const out = new CappedBuffer(request.maxOutputBytes);
      const err = new CappedBuffer(request.maxOutputBytes);
      let timedOut = false;
      let cancelled = false;
      let spawnError: Error | undefined;
      child.stdout.on('data', (c: Buffer) => out.push(c));
      child.stderr.on('data', (c: Buffer) => err.push(c));
      child.stdin.on('error', () => {});
      child.stdin.end(request.stdin ?? '');
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup(child.pid);
      }, request.timeoutMs);
      const onAbort = () => {
        cancelled = true;
        killGroup(child.pid);
      };
      request.signal?.addEventListener('abort', onAbort, { once: true });
      if (request.signal?.aborted) onAbort();
      child.on('error', (e) => {
        spawnError = e;
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        request.signal?.removeEventListener('abort', onAbort);
        killGroup(child.pid);
        if (spawnError) logger.debug('sandbox.spawn_failed', { message: spawnError.message });
        resolve({
          exitCode: spawnError ? 127 : code,
          signal,
          stdout: out.text(),
          stderr: spawnError ? `${err.text()}${spawnError.message}\n` : err.text(),
          stdoutDropped: out.dropped,
          stderrDropped: err.dropped,
          timedOut,
          cancelled,
          layers,
          durationMs: performance.now() - started,
        });
      });
    });
  };

  const spawn = (
    request: Omit<SandboxRequest, 'timeoutMs' | 'maxOutputBytes' | 'stdin'>,
  ): SandboxedProcess => {
    const [file, ...args] = request.argv;
    if (!file) throw new RuneError('INTERNAL', 'sandbox: empty argv');
    const child = spawnChild(file, args, {
      cwd: request.cwd,
      env: request.env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const exited = new Promise<{ exitCode: number | null; signal: string | null }>((resolve) => {
      child.on('error', () => resolve({ exitCode: 127, signal: null }));
      child.on('exit', (exitCode, signal) => {
        killGroup(child.pid);
        resolve({ exitCode, signal });
      });
    });
    const kill = () => killGroup(child.pid);
    request.signal?.addEventListener('abort', kill, { once: true });
    return {
      pid: child.pid,
      stdin: child.stdin,
      stdout: child.stdout,
      stderr: child.stderr,
      layers: notBuilt(),
      exited,
      kill,
    };
  };

  return { run, spawn, describe: notBuilt };
}
