// Runs tool processes for the agent, the tools and the MCP client inside every sandbox layer this
// machine offers (through the static helper, native/src/helper.c), caps their output, kills the
// whole process tree on timeout or cancel, and reports which layers were applied and why not.
import { type ChildProcess, spawn as spawnChild, spawnSync } from 'node:child_process';
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import type { RuneConfig, SandboxMode } from '../config/schema.ts';
import { isSea } from '../core/assets.ts';
import { RuneError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { runeHome } from '../core/paths.ts';
import { processSlot } from '../core/process-slot.ts';
import { moveAsideCreated, type Watched, watchAbsent } from './absent.ts';
import {
  describeCapabilities,
  type KernelProbe,
  readCgroupV1Dirs,
  readSystemFacts,
  type SandboxCapabilities,
} from './capabilities.ts';
import { allowedEnvironment } from './env.ts';
import { GitGuard } from './git.ts';
import { sandboxHelperPath } from './helper.ts';
import { runeNative } from './native.ts';
import {
  describeView,
  HOME_RUNS_LATER,
  hiddenPaths,
  isInside,
  MASKED_SYSTEM_FOLDER,
  parseReport,
  planHelperArgs,
  protectedCandidates,
  type ResolvedName,
  SYSTEM_READ_ONLY,
  type ViewSummary,
} from './plan.ts';
import { cachedKernelProbe } from './probe-cache.ts';
import { resolveTargets, resolveTargetsSync } from './resolve.ts';
import { closedSystemEntries, findClosedEntries, folderStamp, rememberClosedEntries } from './secrets.ts';
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

export const LAYER_ORDER: LayerName[] = [
  'cgroups',
  'network',
  'dns',
  'seccomp',
  'landlock',
  'namespaces',
  'rlimits',
];
const REPORT_FD = 3;

// Per process, not per bundle copy of this module: cgroup names must not repeat within the process,
// and the exit hook must see every cgroup still draining.
const state = processSlot('rune.sandbox.executor', () => ({
  capabilities: undefined as SandboxCapabilities | undefined,
  cgroupCounter: 0,
  // Cgroups still draining when rune exits get one last synchronous attempt, so none is left behind.
  pendingCgroups: new Set<string>(),
  exitHookInstalled: false,
}));

/**
 * The kernel probe (native/src/probe.c). The static helper answers it in ~2 ms; the addon would
 * fork the whole Node process for the namespace test, so it is only the fallback. The binary keeps
 * the answer across runs for the same kernel, boot, binary and confinement (probe-cache.ts).
 */
function probeKernel(): KernelProbe {
  const helper = (): KernelProbe | undefined => {
    try {
      // The same call lists /etc's closed entries (the view hides them), saving a second start.
      const stamp = folderStamp(MASKED_SYSTEM_FOLDER);
      const result = spawnSync(sandboxHelperPath(), ['--closed', MASKED_SYSTEM_FOLDER, '--probe'], {
        encoding: 'utf8',
        timeout: 5000,
      });
      if (result.status === 0) {
        const [closed, probe] = result.stdout.trim().split('\n');
        if (stamp !== undefined && closed)
          rememberClosedEntries(MASKED_SYSTEM_FOLDER, stamp, JSON.parse(closed));
        return JSON.parse(probe ?? '') as KernelProbe;
      }
    } catch {
      // Fall through to the addon.
    }
    return undefined;
  };
  let probe: KernelProbe | undefined;
  try {
    // Only the single executable keeps it: a source-tree run (unit tests) never writes into a home.
    probe = isSea() ? cachedKernelProbe(helperStamp(), helper) : helper();
  } catch {
    probe = helper();
  }
  return probe ?? runeNative().probe();
}

/** Which helper probes: a new build has a new one (its file name carries its sha256). */
function helperStamp(): string {
  const path = sandboxHelperPath();
  const st = statSync(path);
  return `${path}:${st.ino}:${st.size}:${st.mtimeMs}`;
}

/** The entries of a system folder others may not read, listed by the helper (or scanned here). */
function scanClosed(folder: string): string[] {
  try {
    const result = spawnSync(sandboxHelperPath(), ['--closed', folder], { encoding: 'utf8', timeout: 5000 });
    if (result.status === 0) return JSON.parse(result.stdout) as string[];
  } catch {
    // The helper is not usable here: scan in Node.
  }
  return findClosedEntries(folder);
}

/** What this machine offers, probed once per process. */
export function sandboxCapabilities(): SandboxCapabilities {
  if (!state.capabilities) {
    const facts = readSystemFacts();
    try {
      state.capabilities = describeCapabilities(probeKernel(), facts);
    } catch (error) {
      const why = `kernel probe failed: ${(error as Error).message}`;
      const none = { available: false, detail: why };
      state.capabilities = describeCapabilities(
        {
          landlockAbi: -38,
          seccompFilter: -38,
          seccompUserNotif: -38,
          currentSeccomp: 0,
          noNewPrivs: 0,
          userns: -38,
          netns: -38,
          mountns: -38,
          pidns: -38,
        },
        facts,
      );
      // Every probed layer is unknown, not refused with the errno the placeholder above carries.
      state.capabilities = {
        ...state.capabilities,
        landlock: { ...none, abi: 0 },
        seccomp: none,
        seccompUserNotif: none,
        userNamespaces: none,
        netNamespaces: none,
        mountNamespaces: none,
        pidNamespaces: none,
      };
    }
  }
  return state.capabilities;
}

type CgroupPlan =
  | { kind: 'systemd'; prefix: string[]; detail: string }
  | { kind: 'delegated'; base: string; detail: string }
  | { kind: 'v1'; bases: { pids: string; memory: string; cpu?: string }; detail: string }
  | { kind: 'none'; detail: string };

function planCgroups(caps: SandboxCapabilities, config: RuneConfig): CgroupPlan {
  const memory = config.policy.max_memory_mb;
  const pids = config.policy.max_pids;
  const cpu = config.sandbox.cpu_percent;
  const limits = `memory.max ${memory} MiB, pids.max ${pids}${cpu ? `, cpu.max ${cpu}%` : ''}`;
  if (caps.userSystemd.available) {
    const prefix = ['systemd-run', '--user', '--scope', '--quiet', '--collect'];
    prefix.push('-p', `MemoryMax=${memory}M`, '-p', `TasksMax=${pids}`);
    if (cpu) prefix.push('-p', `CPUQuota=${cpu}%`);
    return { kind: 'systemd', prefix: [...prefix, '--'], detail: `systemd-run --user --scope: ${limits}` };
  }
  if (caps.cgroupV2.available) {
    const facts = readSystemFacts();
    const base = join(facts.cgroup2Mount ?? '/sys/fs/cgroup', facts.cgroup2Path ?? '');
    try {
      writeFileSync(join(base, 'cgroup.subtree_control'), `+memory +pids${cpu ? ' +cpu' : ''}`);
      return { kind: 'delegated', base, detail: `delegated cgroup v2 under ${base}: ${limits}` };
    } catch (error) {
      return {
        kind: 'none',
        detail: `cannot enable controllers in ${base} (${(error as Error).message}); rlimits and the wall-clock kill still apply`,
      };
    }
  }
  const why = caps.userSystemd.detail;
  // The hybrid layout keeps memory and pids on cgroup v1: usable where those folders are writable.
  const v1 = readCgroupV1Dirs();
  if (v1.pids && v1.memory) {
    const bases = { pids: v1.pids, memory: v1.memory, ...(cpu && v1.cpu ? { cpu: v1.cpu } : {}) };
    const noCpu = cpu && !v1.cpu ? ' (cpu controller not writable: no cpu limit)' : '';
    return { kind: 'v1', bases, detail: `cgroup v1 of the hybrid layout: ${limits}${noCpu}` };
  }
  return {
    kind: 'none',
    detail: `${caps.cgroupV2.detail}; ${why}; no writable cgroup v1 pids+memory either; rlimits and the wall-clock kill of the whole tree still apply`,
  };
}

/** The cgroup folders of one call, limits written; removed again by removeCgroups. */
function makeCgroups(plan: CgroupPlan, config: RuneConfig): string[] {
  const name = `rune-${process.pid}-${++state.cgroupCounter}`;
  const memory = String(config.policy.max_memory_mb * 1024 * 1024);
  const cpu = config.sandbox.cpu_percent;
  const made: string[] = [];
  try {
    if (plan.kind === 'delegated') {
      const dir = join(plan.base, name);
      mkdirSync(dir);
      made.push(dir);
      writeFileSync(join(dir, 'memory.max'), memory);
      writeFileSync(join(dir, 'pids.max'), String(config.policy.max_pids));
      if (cpu) writeFileSync(join(dir, 'cpu.max'), `${cpu * 1000} 100000`);
    } else if (plan.kind === 'v1') {
      const pids = join(plan.bases.pids, name);
      mkdirSync(pids);
      made.push(pids);
      writeFileSync(join(pids, 'pids.max'), String(config.policy.max_pids));
      const mem = join(plan.bases.memory, name);
      mkdirSync(mem);
      made.push(mem);
      writeFileSync(join(mem, 'memory.limit_in_bytes'), memory);
      if (plan.bases.cpu && cpu) {
        const dir = join(plan.bases.cpu, name);
        mkdirSync(dir);
        made.push(dir);
        writeFileSync(join(dir, 'cpu.cfs_period_us'), '100000');
        writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(cpu * 1000));
      }
    }
  } catch (error) {
    removeCgroups(made);
    throw error;
  }
  return made;
}

function removeCgroups(dirs: readonly string[], attempt = 0): void {
  const left: string[] = [];
  if (!state.exitHookInstalled && dirs.length > 0) {
    state.exitHookInstalled = true;
    process.once('exit', () => {
      for (const dir of state.pendingCgroups) {
        try {
          rmdirSync(dir);
        } catch {
          // Nothing more can be done at exit.
        }
      }
    });
  }
  for (const dir of dirs) {
    try {
      writeFileSync(join(dir, 'cgroup.kill'), '1');
    } catch {
      // cgroup v1 and older kernels have no cgroup.kill; the PID namespace is gone already.
    }
    try {
      rmdirSync(dir);
      state.pendingCgroups.delete(dir);
    } catch {
      left.push(dir);
      state.pendingCgroups.add(dir);
    }
  }
  // The last processes may still be exiting: try again shortly, a few times, without blocking.
  if (left.length > 0 && attempt < 8)
    setTimeout(() => removeCgroups(left, attempt + 1), 50 * (attempt + 1)).unref();
}

/** The real path (every symlink resolved) of a path that exists; the path itself otherwise. */
function realPath(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes empty cgroups of rune processes that died without cleaning up (killed, crashed). */
function sweepStaleCgroups(plan: CgroupPlan): void {
  const bases =
    plan.kind === 'delegated'
      ? [plan.base]
      : plan.kind === 'v1'
        ? [plan.bases.pids, plan.bases.memory, ...(plan.bases.cpu ? [plan.bases.cpu] : [])]
        : [];
  for (const base of bases) {
    for (const name of listDir(base)) {
      const match = /^rune-(\d+)-\d+$/.exec(name);
      if (!match || processAlive(Number(match[1]))) continue;
      try {
        rmdirSync(join(base, name));
      } catch {
        // Still has processes, or not ours to remove.
      }
    }
  }
}

/** True when no process is left in any of the call's cgroups, so they can serve the next call. */
function cgroupsEmpty(dirs: readonly string[]): boolean {
  try {
    return dirs.every((dir) => readFileSync(join(dir, 'cgroup.procs'), 'utf8').trim() === '');
  } catch {
    return false;
  }
}

/**
 * Kills whatever the call left in its cgroups. Without a PID namespace (a container runtime's
 * seccomp profile refuses one) a process that left the call's process group with setsid would
 * outlive the call; the cgroup still holds it. A few rounds catch children forked meanwhile
 * (pids.max bounds how many there can be); cgroup v1 has no cgroup.kill to do it at once.
 */
function killCgroupProcesses(dirs: readonly string[]): void {
  for (let round = 0; round < 5 && !cgroupsEmpty(dirs); round++) {
    for (const dir of dirs) {
      let pids: string[];
      try {
        pids = readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean);
      } catch {
        continue;
      }
      for (const pid of pids) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
    }
  }
}

/**
 * Creating and removing cgroups costs tens of ms on a cgroup v1 hierarchy (measured here: ~45 ms
 * per call), so an executor keeps the cgroups of finished calls and reuses them once empty; they
 * are removed when rune exits.
 */
class CgroupPool {
  private free: string[][] = [];
  private all = new Set<string[]>();
  constructor(
    private readonly plan: CgroupPlan,
    private readonly config: RuneConfig,
  ) {
    sweepStaleCgroups(plan);
  }
  acquire(): string[] {
    const reused = this.free.pop();
    if (reused) return reused;
    const made = makeCgroups(this.plan, this.config);
    if (this.all.size === 0) process.once('exit', () => this.drain());
    this.all.add(made);
    return made;
  }
  release(dirs: string[]): void {
    if (dirs.length === 0) return;
    killCgroupProcesses(dirs);
    if (cgroupsEmpty(dirs)) {
      this.free.push(dirs);
      return;
    }
    this.all.delete(dirs);
    removeCgroups(dirs);
  }
  private drain(): void {
    for (const dirs of this.all) removeCgroups(dirs);
    this.all.clear();
    this.free = [];
  }
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

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function removeCallTmp(prepared: Prepared): void {
  if (prepared.tmpDir) rmSync(prepared.tmpDir, { recursive: true, force: true });
}

const NO_NAMESPACE_DNS =
  'no network namespace: seccomp refuses the inet and new UNIX sockets a lookup needs; no resolver is reachable';

/**
 * Without a network namespace (a container runtime's seccomp profile) the network is still closed:
 * seccomp refuses inet sockets and Landlock (ABI 4+) TCP bind/connect. Only allowed domains are lost.
 */
function networkLayer(caps: SandboxCapabilities, net: boolean, guard: boolean): LayerReport {
  if (net)
    return {
      layer: 'network',
      applied: true,
      detail: `empty network namespace${guard ? '; allowed domains through the net guard (seccomp user notification + ADDFD)' : '; allowed domains unavailable: no seccomp user notification'}`,
    };
  if (!caps.seccomp.available)
    return { layer: 'network', applied: false, detail: `no network namespace: ${caps.netNamespaces.detail}` };
  const landlock = caps.landlock.available && caps.landlock.abi >= 4;
  return {
    layer: 'network',
    applied: true,
    detail: `no network namespace (${caps.netNamespaces.detail}): seccomp refuses inet and inet6 sockets${landlock ? '; Landlock denies TCP bind and connect' : ''}; allowed domains unreachable`,
  };
}

/** The layers a call would get, from the capabilities alone (before anything ran). */
export function expectedLayers(
  caps: SandboxCapabilities,
  cgroups: CgroupPlan,
  config: RuneConfig,
): LayerReport[] {
  const ns = caps.userNamespaces.available && caps.mountNamespaces.available && caps.pidNamespaces.available;
  const net = ns && caps.netNamespaces.available;
  const guard = caps.seccompUserNotif.available && caps.seccomp.available;
  const nsDetail = [caps.userNamespaces, caps.mountNamespaces, caps.pidNamespaces].find(
    (c) => !c.available,
  )?.detail;
  const maxFile = config.sandbox.max_file_mb ?? 1024;
  return [
    { layer: 'cgroups', applied: cgroups.kind !== 'none', detail: cgroups.detail },
    networkLayer(caps, net, guard),
    {
      layer: 'dns',
      applied: net || caps.seccomp.available,
      detail: net
        ? 'generated /etc/hosts with the allowed names only; no resolver reachable'
        : caps.seccomp.available
          ? NO_NAMESPACE_DNS
          : 'no network namespace',
    },
    { layer: 'seccomp', applied: caps.seccomp.available, detail: caps.seccomp.detail },
    { layer: 'landlock', applied: caps.landlock.available, detail: caps.landlock.detail },
    {
      layer: 'namespaces',
      applied: ns,
      detail: ns
        ? "user+mount+pid+net+ipc+uts namespaces; view built from the grants: a new root holding the system folders (read-only), a private /proc, a read-only /sys, a minimal /dev with its own ptys, a private /tmp, and each grant at its place (read-only grants as read-only mounts); /etc secrets hidden; absent unless granted: /home, /root, /run, /var, the host's sockets, disks and terminals"
        : `${nsDetail ?? 'unavailable'}; without the view, seccomp refuses new UNIX sockets, inet sockets, System V IPC, inotify, xattr changes and terminal-control ioctls, and Landlock keeps the host's disks, ptys, /dev/shm and hidden files of read-only folders out`,
    },
    {
      layer: 'rlimits',
      applied: true,
      detail: `RLIMIT_FSIZE ${maxFile} MiB, RLIMIT_NOFILE, wall-clock kill`,
    },
  ];
}

function switchedOff(reason: string): LayerReport[] {
  return LAYER_ORDER.map((layer) => ({ layer, applied: false, detail: reason }));
}

interface Prepared {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  base: LayerReport[];
  notes: LayerReport[];
  cgroupDirs: string[];
  sandboxed: boolean;
  /** What the view holds (namespaces layer). */
  view?: ViewSummary;
  /** Without a view: the call's own temporary folder on the host, removed when it ends. */
  tmpDir?: string;
  /** Writable roots whose git folders are judged after the call (src/sandbox/git.ts). */
  gitRoots?: string[];
  /** Hidden or protected paths that did not exist before the call (src/sandbox/absent.ts). */
  absent?: Watched[];
}

export function createSandboxExecutor(options: SandboxExecutorOptions): SandboxExecutor {
  const { config, logger } = options;
  const mode: SandboxMode = options.mode ?? config.sandbox.mode;
  let cgroups: CgroupPlan | undefined;
  let pool: CgroupPool | undefined;
  const caps = (): SandboxCapabilities => sandboxCapabilities();
  let guard: GitGuard | undefined;
  const gitGuard = (): GitGuard => {
    guard ??= new GitGuard(logger, process.env.HOME, join(runeHome(), 'state'));
    return guard;
  };
  /** Long-lived sandboxed processes with writable roots (MCP servers): they may write any time. */
  const liveWriters = new Set<Prepared>();
  /** After a call: judges its writable roots' git folders; the text tells the model what was undone. */
  const gitAfter = (prepared: Prepared, endsCall = true): string => {
    if (!prepared.gitRoots || prepared.gitRoots.length === 0) return '';
    const roots = [...prepared.gitRoots, ...[...liveWriters].flatMap((p) => p.gitRoots ?? [])];
    try {
      const message = gitGuard().check([...new Set(roots)], endsCall);
      return message ? `${message}\n` : '';
    } catch (error) {
      logger.warn('sandbox.git_check_failed', {
        message: `git check after the call failed: ${(error as Error).message}`,
      });
      return '';
    }
  };

  /** After a call: moves aside the hidden or protected paths it created. */
  const absentAfter = (prepared: Prepared): string => {
    if (!prepared.absent || prepared.absent.length === 0) return '';
    const actions = moveAsideCreated(prepared.absent);
    if (actions.length === 0) return '';
    const message = `rune: the command created paths the sandbox hides or keeps read-only (credential stores, start-up files); undone:\n${actions.map((a) => `  - ${a}`).join('\n')}`;
    logger.warn('sandbox.absent_created', { message });
    return `${message}\n`;
  };

  const cgroupPlan = (): CgroupPlan => {
    cgroups ??= planCgroups(caps(), config);
    return cgroups;
  };

  const describe = (): LayerReport[] => {
    if (mode === 'off') return switchedOff('sandbox.mode = off');
    return expectedLayers(caps(), cgroupPlan(), config);
  };

  const prepare = (
    request: Omit<SandboxRequest, 'timeoutMs' | 'maxOutputBytes' | 'stdin'>,
    resolved: ResolvedName[],
  ): Prepared => {
    // The allow list holds in every mode, sandbox off included: it is about what a tool may see.
    const allowed = allowedEnvironment(request.env, config.sandbox.env_passthrough);
    if (allowed.removed.length > 0) logger.debug('sandbox.env_not_passed', { names: allowed.removed });
    const env = { ...allowed.env, ...request.configuredEnv };
    const cwd = resolve(request.cwd);
    if (mode === 'off') {
      return {
        argv: request.argv,
        env,
        cwd,
        base: switchedOff('sandbox.mode = off'),
        notes: [],
        cgroupDirs: [],
        sandboxed: false,
      };
    }
    const base = describe();
    const missing = base.filter((l) => !l.applied);
    if (mode === 'strict' && missing.length > 0) {
      throw new RuneError('SANDBOX_SETUP', 'sandbox strict: a layer this machine lacks would be skipped', {
        details: missing.map((l) => `${l.layer}: ${l.detail}`),
      });
    }
    let helper: string;
    try {
      helper = sandboxHelperPath();
    } catch (error) {
      if (mode === 'strict') throw error;
      const why = `sandbox helper unavailable: ${(error as Error).message}`;
      logger.warn('sandbox.helper_missing', { message: why });
      return {
        argv: request.argv,
        env,
        cwd,
        base: switchedOff(why),
        notes: [],
        cgroupDirs: [],
        sandboxed: false,
      };
    }
    const namespaces = base.find((l) => l.layer === 'namespaces')?.applied ?? false;
    // Every grant, hidden and protected path is resolved to its real path once, here: the view puts
    // each grant at its real place and hides by real path; the helper refuses a path that turned
    // into a symlink since. A grant named through a symlink keeps that name as a symlink.
    const realCwd = realPath(cwd);
    const links: { path: string; target: string }[] = [];
    const realGrant = (path: string): string => {
      const absolute = resolve(cwd, path);
      const real = realPath(absolute);
      if (real !== absolute && !links.some((l) => l.path === absolute))
        links.push({ path: absolute, target: real });
      return real;
    };
    if (realCwd !== cwd) links.push({ path: cwd, target: realCwd });
    // Without a view there is no private /tmp: the call gets its own folder instead (TMPDIR), made
    // here with mode 0700 and removed when the call ends.
    const callTmp = namespaces ? undefined : mkdtempSync(join(tmpdir(), 'rune-call-'));
    if (callTmp) env.TMPDIR = callTmp;
    const rwRoots = [...new Set([...request.readWritePaths, ...(callTmp ? [callTmp] : [])].map(realGrant))];
    const roRoots = [...new Set(request.readOnlyPaths.map(realGrant))];
    const protectedPaths: string[] = [];
    const home = realPath(resolve(runeHome()));
    for (const root of rwRoots) {
      // Only what exists can be bound read-only (and is worth naming in the report).
      protectedPaths.push(
        ...protectedCandidates(root, listDir(root))
          .filter((path) => lstatSync(path, { throwIfNoEntry: false }) !== undefined)
          .map(realPath),
      );
      if (isInside(home, root)) protectedPaths.push(home);
    }
    // Every git folder under the writable roots: config, hooks, info, commondir and .git files
    // read-only in the view, .git folders pinned (src/sandbox/git.ts). Its paths are real already.
    // The home folder's start-up files and git config stay read-only in a writable home.
    const userHome = request.env.HOME ?? process.env.HOME;
    const runsLater = userHome ? HOME_RUNS_LATER.map((p) => join(realPath(resolve(userHome)), p)) : [];
    for (const path of runsLater) {
      const real = listDir(dirname(path)).includes(basename(path)) ? realPath(path) : undefined;
      if (real && rwRoots.some((root) => isInside(real, root) && real !== root)) protectedPaths.push(real);
    }
    const git = gitGuard().prepare(rwRoots, liveWriters.size === 0);
    protectedPaths.push(...git.protect);
    const pinPaths = git.pin;
    const hidePaths = new Set([
      ...hiddenPaths(
        request.env.HOME ?? process.env.HOME,
        // rune's own folder (rune.toml with the API key, sessions, audit log) is part of the floor.
        [...config.policy.denied_paths, home, ...(request.env.HOME ? [join(request.env.HOME, '.rune')] : [])],
        [...SYSTEM_READ_ONLY, realCwd, ...roRoots, ...rwRoots],
        [...request.readOnlyPaths, ...request.readWritePaths].map((p) => resolve(cwd, p)),
        realPath,
      ),
      ...listDir('/etc/ssh')
        .filter((n) => n.endsWith('_key'))
        .map((n) => join('/etc/ssh', n)),
      // Everything else of /etc that others may not read, as a class (shadow-, keys, passwords…).
      ...closedSystemEntries(MASKED_SYSTEM_FOLDER, scanClosed),
    ]);
    // Hidden and protected paths missing now cannot be mounted over: they are watched instead.
    // rune's own folder is left out: rune itself may create it during the call (sessions, journal).
    const ownFolders = [
      home,
      ...(request.env.HOME ? [join(realPath(resolve(request.env.HOME)), '.rune')] : []),
    ];
    const absent = watchAbsent(
      [...hidePaths, ...runsLater].filter((p) => !ownFolders.some((own) => isInside(p, own))),
      rwRoots,
    );
    const plan = cgroupPlan();
    let cgroupDirs: string[] = [];
    let cgroupError: string | undefined;
    if (plan.kind === 'delegated' || plan.kind === 'v1') {
      try {
        pool ??= new CgroupPool(plan, config);
        cgroupDirs = pool.acquire();
      } catch (error) {
        cgroupError = (error as Error).message;
        logger.warn('sandbox.cgroup_failed', { message: cgroupError });
      }
    }
    const {
      args,
      notes: planNotes,
      view,
    } = planHelperArgs({
      request: { ...request, cwd: realCwd, readOnlyPaths: roRoots, readWritePaths: rwRoots },
      links,
      ...(env.TMPDIR ? { tmpDir: env.TMPDIR } : {}),
      strict: mode === 'strict',
      namespaces,
      protectedPaths,
      pinPaths,
      hidePaths: [...hidePaths],
      resolved,
      limits: {
        fsizeBytes: (config.sandbox.max_file_mb ?? 1024) * 1024 * 1024,
        nofile: 4096,
        nproc: config.policy.max_pids,
        tmpMb: config.sandbox.tmp_mb ?? 512,
        dataBytes: config.policy.max_memory_mb * 1024 * 1024,
      },
      cgroupDirs,
      reportFd: REPORT_FD,
    });
    const gitNote = [
      ...(git.pin.length + git.protect.length > 0
        ? [
            `git folders under writable roots: config, hooks, info and .git files read-only (${git.protect.length} path(s))`,
          ]
        : []),
      ...git.notes,
    ].join('; ');
    const notes = gitNote
      ? [...planNotes, { layer: 'namespaces' as const, applied: true, detail: gitNote }]
      : planNotes;
    const prefix = plan.kind === 'systemd' ? plan.prefix : [];
    // The exact command line, for debugging and for bench/sandbox.mjs to replay a tool call.
    logger.debug('sandbox.helper_argv', { argv: [helper, ...args] });
    const cgroupReport: LayerReport =
      cgroupError !== undefined
        ? { layer: 'cgroups', applied: false, detail: `creating the cgroup failed: ${cgroupError}` }
        : { layer: 'cgroups', applied: plan.kind !== 'none', detail: plan.detail };
    return {
      argv: [...prefix, helper, ...args],
      env,
      cwd,
      base: base.map((l) => (l.layer === 'cgroups' ? cgroupReport : l)),
      notes,
      view,
      ...(callTmp ? { tmpDir: callTmp } : {}),
      cgroupDirs,
      sandboxed: true,
      gitRoots: rwRoots,
      absent,
    };
  };

  /** The final report: what the helper said, the decisions made here, then the expectations. */
  const mergeLayers = (
    prepared: Prepared,
    reportText: string,
  ): { layers: LayerReport[]; setupError?: string } => {
    if (!prepared.sandboxed) return { layers: prepared.base };
    const parsed = parseReport(reportText);
    const layers = LAYER_ORDER.map((name): LayerReport => {
      const note = prepared.notes.find((n) => n.layer === name);
      const fromHelper = parsed.layers.get(name);
      if (name === 'cgroups') {
        // Our plan has the limits; the helper only says whether joining worked.
        const own = prepared.base.find((l) => l.layer === 'cgroups') as LayerReport;
        return fromHelper && !fromHelper.applied ? fromHelper : own;
      }
      if (name === 'dns' && !fromHelper) {
        const net = parsed.layers.get('network');
        if (net?.applied)
          return {
            layer: 'dns',
            applied: true,
            detail: net.detail.startsWith('no network namespace')
              ? NO_NAMESPACE_DNS
              : (note?.detail ?? 'empty network namespace: no name resolves'),
          };
      }
      const report = fromHelper ?? {
        layer: name,
        applied: false,
        detail: parsed.setupError ?? 'not reported by the sandbox helper',
      };
      if (name === 'namespaces' && prepared.view && report.applied)
        return {
          ...report,
          detail: `${report.detail}; ${describeView(prepared.view)}${note ? `; ${note.detail}` : ''}`,
        };
      if (name === 'namespaces' && !report.applied) {
        // The helper says what it stood in with; the capability probe says why there was no view.
        const why = prepared.base.find((l) => l.layer === 'namespaces');
        if (why && !why.applied && !report.detail.includes(why.detail.split(';')[0] ?? ''))
          return { ...report, detail: `${why.detail.split(';')[0]}; ${report.detail}` };
      }
      return note ? { ...report, detail: `${report.detail}; ${note.detail}` } : report;
    });
    return parsed.setupError === undefined ? { layers } : { layers, setupError: parsed.setupError };
  };

  const start = (prepared: Prepared): ChildProcess => {
    const [file, ...args] = prepared.argv;
    if (!file) throw new RuneError('INTERNAL', 'sandbox: empty argv');
    return spawnChild(file, args, {
      cwd: prepared.cwd,
      env: prepared.env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe', ...(prepared.sandboxed ? (['pipe'] as const) : [])],
    });
  };

  const readReport = (child: ChildProcess): Promise<string> =>
    new Promise((resolveText) => {
      const stream = child.stdio[REPORT_FD] as NodeJS.ReadableStream | null | undefined;
      if (!stream) return resolveText('');
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', () => resolveText(Buffer.concat(chunks).toString('utf8')));
      stream.on('close', () => resolveText(Buffer.concat(chunks).toString('utf8')));
    });

  const run = async (request: SandboxRequest): Promise<SandboxResult> => {
    const started = performance.now();
    if (request.argv.length === 0) throw new RuneError('INTERNAL', 'sandbox: empty argv');
    const resolved = mode === 'off' ? [] : await resolveTargets(request.allowedDomains);
    const prepared = prepare(request, resolved);
    const child = start(prepared);
    const reportText = readReport(child);
    const out = new CappedBuffer(request.maxOutputBytes);
    const err = new CappedBuffer(request.maxOutputBytes);
    let timedOut = false;
    let cancelled = false;
    let spawnError: Error | undefined;
    child.stdout?.on('data', (c: Buffer) => out.push(c));
    child.stderr?.on('data', (c: Buffer) => err.push(c));
    child.stdin?.on('error', () => {});
    child.stdin?.end(request.stdin ?? '');
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
    killGroup(child.pid);
    pool?.release(prepared.cgroupDirs);
    const reverted = gitAfter(prepared) + absentAfter(prepared);
    removeCallTmp(prepared);
    const merged = mergeLayers(prepared, await reportText);
    if (merged.setupError && code === 125) {
      throw new RuneError('SANDBOX_SETUP', `sandbox setup failed: ${merged.setupError}`, {
        details: merged.layers.filter((l) => !l.applied).map((l) => `${l.layer}: ${l.detail}`),
      });
    }
    if (spawnError) logger.debug('sandbox.spawn_failed', { message: spawnError.message });
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
  };

  const spawn = (
    request: Omit<SandboxRequest, 'timeoutMs' | 'maxOutputBytes' | 'stdin'>,
  ): SandboxedProcess => {
    if (request.argv.length === 0) throw new RuneError('INTERNAL', 'sandbox: empty argv');
    const resolved = mode === 'off' ? [] : resolveTargetsSync(request.allowedDomains);
    const prepared = prepare(request, resolved);
    if (prepared.gitRoots && prepared.gitRoots.length > 0) liveWriters.add(prepared);
    const child = start(prepared);
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
        pool?.release(prepared.cgroupDirs);
        if (prepared.gitRoots && prepared.gitRoots.length > 0) liveWriters.delete(prepared);
        gitAfter(prepared);
        absentAfter(prepared);
        removeCallTmp(prepared);
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
  };

  const checkGit = (roots: readonly string[]): string | undefined => {
    if (mode === 'off') return undefined;
    const all = [...roots.map((p) => resolve(p)), ...[...liveWriters].flatMap((p) => p.gitRoots ?? [])];
    if (all.length === 0) return undefined;
    return gitAfter({ gitRoots: [...new Set(all)] } as Prepared, false) || undefined;
  };

  return { run, spawn, describe, checkGit };
}
