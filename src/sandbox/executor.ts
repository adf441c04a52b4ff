// Runs tool processes for the agent, the tools and the MCP client inside every sandbox layer this
// machine offers (through the static helper, native/src/helper.c), caps their output, kills the
// whole process tree on timeout or cancel, and reports which layers were applied and why not.
// The parts: kernel.ts (what the machine offers), cgroups.ts (limits), prepare.ts (one call's
// grants, view and helper argv, through plan.ts), layers.ts (the reports).
import { type ChildProcess, spawn as spawnChild } from 'node:child_process';
import { join, resolve } from 'node:path';
import type { RuneConfig, SandboxMode } from '../config/schema.ts';
import { RuneError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { runeHome } from '../core/paths.ts';
import { processSlot } from '../core/process-slot.ts';
import { moveAsideCreated } from './absent.ts';
import { removeCallTmp } from './call-tmp.ts';
import { type CgroupPlan, CgroupPool, planCgroups } from './cgroups.ts';
import { GitGuard } from './git.ts';
import { sandboxCapabilities } from './kernel.ts';
import { expectedLayers, mergeLayers, switchedOff } from './layers.ts';
import { runeNative } from './native.ts';
import { type CallRequest, type PrepareContext, type Prepared, prepareCall, REPORT_FD } from './prepare.ts';
import { resolveTargets, resolveTargetsSync } from './resolve.ts';
import type {
  LayerReport,
  SandboxExecutor,
  SandboxedProcess,
  SandboxRequest,
  SandboxResult,
} from './types.ts';

export { sandboxCapabilities } from './kernel.ts';
export { expectedLayers, LAYER_ORDER } from './layers.ts';

export interface SandboxExecutorOptions {
  config: RuneConfig;
  logger: Logger;
  mode?: SandboxMode;
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

/** What the calls of one executor share: its configuration, cgroup pool, git guard and live writers. */
interface ExecutorContext extends PrepareContext {
  /** Long-lived sandboxed processes with writable roots (MCP servers): they may write any time. */
  writers: Set<Prepared>;
  /** After a call: judges its writable roots' git folders; the text tells the model what was undone. */
  gitAfter(prepared: Pick<Prepared, 'gitRoots'>, endsCall?: boolean): string;
  pool?: CgroupPool;
}

function executorContext(config: RuneConfig, logger: Logger, mode: SandboxMode): ExecutorContext {
  let cgroups: CgroupPlan | undefined;
  let guard: GitGuard | undefined;
  const ctx: ExecutorContext = {
    config,
    logger,
    mode,
    writers: new Set<Prepared>(),
    cgroupPlan: () => {
      cgroups ??= planCgroups(sandboxCapabilities(), config);
      return cgroups;
    },
    describe: () =>
      mode === 'off'
        ? switchedOff('sandbox.mode = off')
        : expectedLayers(sandboxCapabilities(), ctx.cgroupPlan(), config),
    cgroupPool: (plan) => {
      ctx.pool ??= new CgroupPool(plan, config);
      return ctx.pool;
    },
    gitGuard: () => {
      guard ??= new GitGuard(logger, process.env.HOME, join(runeHome(), 'state'));
      return guard;
    },
    liveWriters: () => ctx.writers.size > 0,
    gitAfter: (prepared, endsCall = true) => {
      if (!prepared.gitRoots || prepared.gitRoots.length === 0) return '';
      const roots = [...prepared.gitRoots, ...[...ctx.writers].flatMap((p) => p.gitRoots ?? [])];
      try {
        const message = ctx.gitGuard().check([...new Set(roots)], endsCall);
        return message ? `${message}\n` : '';
      } catch (error) {
        logger.warn('sandbox.git_check_failed', {
          message: `git check after the call failed: ${(error as Error).message}`,
        });
        return '';
      }
    },
  };
  return ctx;
}

/** After a call: moves aside the hidden or protected paths it created. */
function absentAfter(logger: Logger, prepared: Prepared): string {
  if (!prepared.absent || prepared.absent.length === 0) return '';
  const actions = moveAsideCreated(prepared.absent);
  if (actions.length === 0) return '';
  const message = `rune: the command created paths the sandbox hides or keeps read-only (credential stores, start-up files); undone:\n${actions.map((a) => `  - ${a}`).join('\n')}`;
  logger.warn('sandbox.absent_created', { message });
  return `${message}\n`;
}

/**
 * Before rune's first process without a PID namespace (the container fallback): rune's environment
 * holds the API key, and there a tool runs as the same user with the host's /proc. Not dumpable,
 * /proc/PID/environ and /proc/PID/mem of rune need CAP_SYS_PTRACE, which no tool has (Landlock's
 * ptrace rule refuses them too, where it applies). With namespaces rune does not exist for the tool,
 * and the addon is not loaded for this. Once per process.
 */
function keepEnvironmentFromTools(logger: Logger): void {
  processSlot('rune.sandbox.undumpable', () => {
    let held = false;
    try {
      held = runeNative().undumpable();
    } catch (error) {
      logger.debug('sandbox.undumpable_failed', { message: (error as Error).message });
    }
    if (!held)
      logger.warn('sandbox.undumpable_failed', {
        message:
          "rune's process could not be made undumpable: a tool outside a PID namespace and Landlock could read its environment",
      });
    return held;
  });
}

function start(prepared: Prepared, logger: Logger): ChildProcess {
  const [file, ...args] = prepared.argv;
  if (!file) throw new RuneError('INTERNAL', 'sandbox: empty argv');
  const namespaces = prepared.base.find((l) => l.layer === 'namespaces')?.applied ?? false;
  if (prepared.sandboxed && !namespaces) keepEnvironmentFromTools(logger);
  return spawnChild(file, args, {
    cwd: prepared.cwd,
    env: prepared.env,
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe', ...(prepared.sandboxed ? (['pipe'] as const) : [])],
  });
}

function readReport(child: ChildProcess): Promise<string> {
  return new Promise((resolveText) => {
    const stream = child.stdio[REPORT_FD] as NodeJS.ReadableStream | null | undefined;
    if (!stream) return resolveText('');
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('error', () => resolveText(Buffer.concat(chunks).toString('utf8')));
    stream.on('close', () => resolveText(Buffer.concat(chunks).toString('utf8')));
  });
}

/** The child's exit, its timeout and cancellation: what `run` waits for. */
async function waitForCall(child: ChildProcess, request: SandboxRequest) {
  let timedOut = false;
  let cancelled = false;
  let spawnError: Error | undefined;
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
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((done) => {
    child.on('close', (c, s) => done([c, s]));
  });
  clearTimeout(timer);
  request.signal?.removeEventListener('abort', onAbort);
  return { code, signal, timedOut, cancelled, spawnError };
}

async function runCall(ctx: ExecutorContext, request: SandboxRequest): Promise<SandboxResult> {
  const started = performance.now();
  if (request.argv.length === 0) throw new RuneError('INTERNAL', 'sandbox: empty argv');
  const resolved = ctx.mode === 'off' ? [] : await resolveTargets(request.allowedDomains);
  const prepared = prepareCall(ctx, request, resolved);
  const child = start(prepared, ctx.logger);
  const reportText = readReport(child);
  const out = new CappedBuffer(request.maxOutputBytes);
  const err = new CappedBuffer(request.maxOutputBytes);
  child.stdout?.on('data', (c: Buffer) => out.push(c));
  child.stderr?.on('data', (c: Buffer) => err.push(c));
  child.stdin?.on('error', () => {});
  child.stdin?.end(request.stdin ?? '');
  const { code, signal, timedOut, cancelled, spawnError } = await waitForCall(child, request);
  killGroup(child.pid);
  ctx.pool?.release(prepared.cgroupDirs);
  const reverted =
    ctx.gitAfter(prepared) + absentAfter(ctx.logger, prepared) + removeCallTmp(prepared, ctx.logger);
  const merged = mergeLayers(prepared, await reportText);
  if (merged.setupError && code === 125) {
    throw new RuneError('SANDBOX_SETUP', `sandbox setup failed: ${merged.setupError}`, {
      details: merged.layers.filter((l) => !l.applied).map((l) => `${l.layer}: ${l.detail}`),
    });
  }
  if (spawnError) ctx.logger.debug('sandbox.spawn_failed', { message: spawnError.message });
  return {
    exitCode: spawnError ? 127 : code,
    signal,
    stdout: out.text(),
    stderr: `${spawnError ? `${err.text()}${spawnError.message}\n` : err.text()}${reverted}`,
    stdoutDropped: out.dropped,
    stderrDropped: err.dropped,
    timedOut,
    cancelled,
    layers: merged.layers,
    durationMs: performance.now() - started,
  };
}

function spawnCall(ctx: ExecutorContext, request: CallRequest): SandboxedProcess {
  if (request.argv.length === 0) throw new RuneError('INTERNAL', 'sandbox: empty argv');
  const resolved = ctx.mode === 'off' ? [] : resolveTargetsSync(request.allowedDomains);
  const prepared = prepareCall(ctx, request, resolved);
  const writes = prepared.gitRoots !== undefined && prepared.gitRoots.length > 0;
  if (writes) ctx.writers.add(prepared);
  const child = start(prepared, ctx.logger);
  const layers: LayerReport[] = prepared.base.map((l) => ({ ...l }));
  const reported = readReport(child).then((text) => {
    const merged = mergeLayers(prepared, text).layers;
    layers.splice(0, layers.length, ...merged);
  });
  // Resolves once the helper's report is merged too, so `layers` is final by then (the report
  // pipe and the exit race each other: a quick command can end before its report is read).
  const exited = new Promise<{ exitCode: number | null; signal: string | null }>((done) => {
    child.on('error', () => done({ exitCode: 127, signal: null }));
    child.on('exit', (exitCode, signal) => {
      killGroup(child.pid);
      ctx.pool?.release(prepared.cgroupDirs);
      if (writes) ctx.writers.delete(prepared);
      ctx.gitAfter(prepared);
      absentAfter(ctx.logger, prepared);
      removeCallTmp(prepared, ctx.logger);
      void reported.then(() => done({ exitCode, signal }));
    });
  });
  const kill = (signal: NodeJS.Signals = 'SIGKILL') => killGroup(child.pid, signal);
  request.signal?.addEventListener('abort', () => kill(), { once: true });
  if (!child.stdin || !child.stdout || !child.stderr)
    throw new RuneError('INTERNAL', 'sandbox: missing stdio');
  return {
    pid: child.pid,
    stdin: child.stdin,
    stdout: child.stdout,
    stderr: child.stderr,
    layers,
    exited,
    kill,
  };
}

export function createSandboxExecutor(options: SandboxExecutorOptions): SandboxExecutor {
  const mode: SandboxMode = options.mode ?? options.config.sandbox.mode;
  const ctx = executorContext(options.config, options.logger, mode);
  const checkGit = (roots: readonly string[]): string | undefined => {
    if (mode === 'off') return undefined;
    const all = [...roots.map((p) => resolve(p)), ...[...ctx.writers].flatMap((p) => p.gitRoots ?? [])];
    if (all.length === 0) return undefined;
    return ctx.gitAfter({ gitRoots: [...new Set(all)] }, false) || undefined;
  };
  return {
    run: (request) => runCall(ctx, request),
    spawn: (request) => spawnCall(ctx, request),
    describe: ctx.describe,
    checkGit,
  };
}
