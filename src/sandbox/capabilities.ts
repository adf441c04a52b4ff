// What this machine offers the sandbox, each with a reason when missing. The kernel is probed by
// the native addon (real system calls, namespaces tried in a forked child); system facts (cgroup
// mounts, a user systemd) are read from /proc and /sys. Turning both into the report is pure.
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getSystemErrorName } from 'node:util';

/** What native/src/probe.c measures: values > 0 or 0 mean available, negative values are -errno. */
export interface KernelProbe {
  landlockAbi: number;
  seccompFilter: number;
  seccompUserNotif: number;
  currentSeccomp: number;
  noNewPrivs: number;
  userns: number;
  netns: number;
  mountns: number;
  pidns: number;
}

export interface SystemFacts {
  /** Mount point of the cgroup2 hierarchy, if any. */
  cgroup2Mount?: string;
  /** This process's path in the cgroup2 hierarchy (the `0::` line of /proc/self/cgroup). */
  cgroup2Path?: string;
  /** Controllers listed in cgroup.controllers of that path. */
  cgroup2Controllers: string[];
  cgroup2Writable: boolean;
  /** True when cgroup v1 controllers are mounted too (the hybrid layout). */
  cgroupV1Present: boolean;
  pid1Comm: string;
  /** Path of the user manager's private socket when it exists. */
  userSystemdSocket?: string;
}

export interface Capability {
  available: boolean;
  /** A version or mode when available, the reason when not. */
  detail: string;
}

export interface SandboxCapabilities {
  landlock: Capability & { abi: number };
  seccomp: Capability;
  seccompUserNotif: Capability;
  userNamespaces: Capability;
  netNamespaces: Capability;
  mountNamespaces: Capability;
  pidNamespaces: Capability;
  cgroupV2: Capability;
  userSystemd: Capability;
}

function errnoName(negative: number): string {
  try {
    return getSystemErrorName(negative);
  } catch {
    return `errno ${-negative}`;
  }
}

const LANDLOCK_REASONS: Record<string, string> = {
  ENOSYS: 'the kernel was built without Landlock (ENOSYS)',
  EOPNOTSUPP: 'Landlock is built in but disabled at boot (add landlock to the lsm= parameter)',
};

function namespaceCapability(result: number, what: string): Capability {
  if (result === 0) return { available: true, detail: 'unprivileged creation works' };
  const name = errnoName(result);
  if (name === 'ECANCELED')
    return { available: false, detail: `not tried: an earlier namespace could not be created` };
  const hint =
    name === 'EPERM' || name === 'ENOSPC'
      ? ' (unprivileged user namespaces are disabled: see kernel.unprivileged_userns_clone, user.max_user_namespaces, or an AppArmor restriction)'
      : '';
  return { available: false, detail: `unshare(${what}) failed with ${name}${hint}` };
}

export function describeCapabilities(probe: KernelProbe, facts: SystemFacts): SandboxCapabilities {
  const landlock =
    probe.landlockAbi > 0
      ? { available: true, detail: `ABI ${probe.landlockAbi}`, abi: probe.landlockAbi }
      : {
          available: false,
          detail:
            LANDLOCK_REASONS[errnoName(probe.landlockAbi)] ??
            `landlock_create_ruleset failed: ${errnoName(probe.landlockAbi)}`,
          abi: 0,
        };
  const seccomp: Capability =
    probe.seccompFilter === 0
      ? {
          available: true,
          detail:
            probe.currentSeccomp === 2 ? 'filter mode (a filter is already stacked on rune)' : 'filter mode',
        }
      : { available: false, detail: `seccomp filters unavailable: ${errnoName(probe.seccompFilter)}` };
  const seccompUserNotif: Capability =
    probe.seccompUserNotif === 0
      ? { available: true, detail: 'user notification supported' }
      : { available: false, detail: `SECCOMP_GET_NOTIF_SIZES failed: ${errnoName(probe.seccompUserNotif)}` };

  return {
    landlock,
    seccomp,
    seccompUserNotif,
    userNamespaces: namespaceCapability(probe.userns, 'CLONE_NEWUSER'),
    netNamespaces: namespaceCapability(probe.netns, 'CLONE_NEWNET'),
    mountNamespaces: namespaceCapability(probe.mountns, 'CLONE_NEWNS'),
    pidNamespaces: namespaceCapability(probe.pidns, 'CLONE_NEWPID'),
    cgroupV2: describeCgroup(facts),
    userSystemd: facts.userSystemdSocket
      ? { available: true, detail: `user manager at ${facts.userSystemdSocket}` }
      : {
          available: false,
          detail:
            facts.pid1Comm === 'systemd'
              ? 'no user systemd manager is running for this user'
              : `no user systemd manager (PID 1 is ${JSON.stringify(facts.pid1Comm)}, not systemd)`,
        },
  };
}

const NEEDED_CONTROLLERS = ['memory', 'pids'];

function describeCgroup(facts: SystemFacts): Capability {
  if (!facts.cgroup2Mount) return { available: false, detail: 'no cgroup2 hierarchy is mounted' };
  const where = `${facts.cgroup2Mount}${facts.cgroup2Path ?? ''}`;
  const missing = NEEDED_CONTROLLERS.filter((c) => !facts.cgroup2Controllers.includes(c));
  if (missing.length > 0) {
    const hybrid = facts.cgroupV1Present ? ' (hybrid layout: those controllers are bound to cgroup v1)' : '';
    return {
      available: false,
      detail: `${where} lacks the ${missing.join(' and ')} controller${missing.length > 1 ? 's' : ''}${hybrid}`,
    };
  }
  if (!facts.cgroup2Writable)
    return { available: false, detail: `${where} is not writable by this user (not delegated)` };
  return { available: true, detail: `delegated subtree at ${where}` };
}

function readOr(path: string, fallback: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return fallback;
  }
}

export function readSystemFacts(env: NodeJS.ProcessEnv = process.env): SystemFacts {
  const mountinfo = readOr('/proc/self/mountinfo', '');
  let cgroup2Mount: string | undefined;
  let cgroupV1Present = false;
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const fstype = right.split(' ')[0];
    const mountPoint = left.split(' ')[4];
    if (fstype === 'cgroup2' && mountPoint) cgroup2Mount ??= mountPoint;
    if (fstype === 'cgroup') cgroupV1Present = true;
  }
  const cgroupLine = readOr('/proc/self/cgroup', '')
    .split('\n')
    .find((line) => line.startsWith('0::'));
  const cgroup2Path = cgroupLine?.slice(3).trim();
  let cgroup2Controllers: string[] = [];
  let cgroup2Writable = false;
  if (cgroup2Mount && cgroup2Path !== undefined) {
    const dir = join(cgroup2Mount, cgroup2Path);
    cgroup2Controllers = readOr(join(dir, 'cgroup.controllers'), '').trim().split(/\s+/).filter(Boolean);
    try {
      accessSync(join(dir, 'cgroup.procs'), constants.W_OK);
      accessSync(dir, constants.W_OK);
      cgroup2Writable = true;
    } catch {
      cgroup2Writable = false;
    }
  }
  const uid = process.getuid?.() ?? 0;
  const runtimeDir = env.XDG_RUNTIME_DIR || `/run/user/${uid}`;
  const socket = join(runtimeDir, 'systemd', 'private');
  return {
    ...(cgroup2Mount ? { cgroup2Mount } : {}),
    ...(cgroup2Path !== undefined ? { cgroup2Path } : {}),
    cgroup2Controllers,
    cgroup2Writable,
    cgroupV1Present,
    pid1Comm: readOr('/proc/1/comm', 'unknown').trim(),
    ...(existsSync(socket) ? { userSystemdSocket: socket } : {}),
  };
}

/**
 * The hybrid layout's cgroup v1 folders of this process for the controllers rune limits, when they
 * are mounted and writable (as root, or when an administrator delegated them).
 */
export function readCgroupV1Dirs(): { pids?: string; memory?: string; cpu?: string } {
  const mounts = new Map<string, string>();
  for (const line of readOr('/proc/self/mountinfo', '').split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const [fstype, , options] = right.split(' ');
    const mountPoint = left.split(' ')[4];
    if (fstype !== 'cgroup' || !mountPoint || !options) continue;
    for (const option of options.split(',')) mounts.set(option, mountPoint);
  }
  const out: { pids?: string; memory?: string; cpu?: string } = {};
  for (const line of readOr('/proc/self/cgroup', '').split('\n')) {
    const [, controllers, path] = line.split(':');
    if (!controllers || path === undefined) continue;
    for (const controller of controllers.split(',')) {
      if (controller !== 'pids' && controller !== 'memory' && controller !== 'cpu') continue;
      const mount = mounts.get(controller);
      if (!mount) continue;
      const dir = join(mount, path);
      try {
        accessSync(dir, constants.W_OK);
        out[controller] = dir;
      } catch {
        // Not ours to write.
      }
    }
  }
  return out;
}
