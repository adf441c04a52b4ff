// Limits of a sandboxed call through cgroups: systemd-run --user --scope where a user systemd
// runs, else a delegated cgroup v2 subtree, else the memory and pids hierarchies of cgroup v1. The
// folders of finished calls are kept in a pool and reused once empty; all are removed at exit.
import { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RuneConfig } from '../config/schema.ts';
import { processAlive } from '../core/process-alive.ts';
import { processSlot } from '../core/process-slot.ts';
import { readCgroupV1Dirs, readSystemFacts, type SandboxCapabilities } from './capabilities.ts';

// Per process, not per bundle copy of this module: cgroup names must not repeat within the process,
// and the exit hook must see every cgroup still draining.
const state = processSlot('rune.sandbox.cgroups', () => ({
  cgroupCounter: 0,
  // Cgroups still draining when rune exits get one last synchronous attempt, so none is left behind.
  pendingCgroups: new Set<string>(),
  exitHookInstalled: false,
}));

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

export type CgroupPlan =
  | { kind: 'systemd'; prefix: string[]; detail: string }
  | { kind: 'delegated'; base: string; detail: string }
  | { kind: 'v1'; bases: { pids: string; memory: string; cpu?: string }; detail: string }
  | { kind: 'none'; detail: string };

export function planCgroups(caps: SandboxCapabilities, config: RuneConfig): CgroupPlan {
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
 * Creating and removing cgroups is slow on a cgroup v1 hierarchy (the kernel synchronises RCU on
 * removal; a call's share shows in bench/sandbox.mjs), so an executor keeps the cgroups of finished
 * calls and reuses them once empty; they are removed when rune exits.
 */
export class CgroupPool {
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
