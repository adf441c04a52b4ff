// What this machine offers the sandbox, each with a reason when missing. The kernel is probed by
// the native addon (real system calls, namespaces tried in a forked child); system facts (cgroup
// mounts, a user systemd) are read from /proc and /sys. Turning both into the report is pure.
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getSystemErrorName } from 'node:util';
import type { KernelProbe } from './native-contract.ts';

/** What native/src/probe.c measures (declared once, in native/src/probe.h). */
export type { KernelProbe } from './native-contract.ts';

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
  /** The switches that refuse unprivileged user namespaces, as read from /proc/sys (absent: no such file). */
  usernsSysctls?: UsernsSysctls;
  /** The real uid: the Debian switch does not apply to root. */
  uid?: number;
}

export interface UsernsSysctls {
  /** kernel.unprivileged_userns_clone (Debian and Ubuntu kernels): 0 refuses them. */
  unprivilegedUsernsClone?: number;
  /** user.max_user_namespaces: 0 refuses them (ENOSPC). */
  maxUserNamespaces?: number;
  /** kernel.apparmor_restrict_unprivileged_userns (Ubuntu 23.10+): 1 allows them only to profiled programs. */
  apparmorRestrictUserns?: number;
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

/**
 * Why unshare(CLONE_NEWUSER) failed, naming what is really in the way. A stacked seccomp filter
 * (Seccomp: 2, as a container runtime's default profile gives every unprivileged container) returns
 * the same EPERM as a sysctl, so the switches are read first: only what is set to refuse is blamed.
 */
export function usernsBlockers(
  errno: string,
  probe: Pick<KernelProbe, 'currentSeccomp' | 'unshareNoop'>,
  facts: SystemFacts,
): string[] {
  const sysctls = facts.usernsSysctls ?? {};
  const causes: string[] = [];
  if (errno === 'ENOSPC') {
    causes.push(
      sysctls.maxUserNamespaces === 0
        ? 'user.max_user_namespaces is 0 (sysctl user.max_user_namespaces=N allows them)'
        : 'the user namespace limit is reached (user.max_user_namespaces, or 32 levels of nesting)',
    );
    return causes;
  }
  if (errno !== 'EPERM' && errno !== 'EACCES') return causes;
  if (sysctls.unprivilegedUsernsClone === 0 && facts.uid !== 0) {
    causes.push(
      'kernel.unprivileged_userns_clone is 0 (sysctl kernel.unprivileged_userns_clone=1 allows them)',
    );
  }
  if (sysctls.apparmorRestrictUserns === 1) {
    causes.push(
      'kernel.apparmor_restrict_unprivileged_userns is 1 (AppArmor allows user namespaces only to programs with a profile that grants them)',
    );
  }
  // unshare(0) changes nothing and the kernel never refuses it: refused, it proves a filter is in the way.
  if (probe.currentSeccomp === 2 && probe.unshareNoop < 0) {
    causes.push(
      'a seccomp filter stacked on rune refuses unshare (Seccomp: 2 in /proc/self/status, and even the no-op unshare(0) fails): the default profile of Docker, containerd and Podman does this in unprivileged containers; a profile that allows unshare (or none) lets rune create its namespaces',
    );
  } else if (probe.currentSeccomp === 2 && causes.length === 0) {
    causes.push(
      'a seccomp filter is stacked on rune (Seccomp: 2 in /proc/self/status) and no sysctl refuses user namespaces, so that filter (or an LSM policy) refuses the namespace flags',
    );
  }
  if (causes.length === 0) {
    causes.push(
      'unprivileged user namespaces are refused here (kernel.unprivileged_userns_clone, user.max_user_namespaces, an AppArmor or SELinux policy, or a seccomp filter)',
    );
  }
  return causes;
}

function namespaceCapability(result: number, what: string, userns: Capability): Capability {
  if (result === 0) return { available: true, detail: 'unprivileged creation works' };
  const name = errnoName(result);
  if (name === 'ECANCELED') {
    return {
      available: false,
      detail: userns.available
        ? 'not tried: an earlier namespace could not be created'
        : `needs a user namespace first: ${userns.detail}`,
    };
  }
  return { available: false, detail: `unshare(${what}) failed with ${name}` };
}

function userNamespaceCapability(probe: KernelProbe, facts: SystemFacts): Capability {
  if (probe.userns === 0) return { available: true, detail: 'unprivileged creation works' };
  const name = errnoName(probe.userns);
  const causes = usernsBlockers(name, probe, facts);
  return {
    available: false,
    detail: `unshare(CLONE_NEWUSER) failed with ${name}${causes.length > 0 ? `: ${causes.join('; ')}` : ''}`,
  };
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
            probe.currentSeccomp === 2
              ? "filter mode, stacked on a filter rune already runs under (a container runtime's, say)"
              : 'filter mode',
        }
      : { available: false, detail: `seccomp filters unavailable: ${errnoName(probe.seccompFilter)}` };
  const seccompUserNotif: Capability =
    probe.seccompUserNotif === 0
      ? { available: true, detail: 'user notification supported' }
      : { available: false, detail: `SECCOMP_GET_NOTIF_SIZES failed: ${errnoName(probe.seccompUserNotif)}` };

  const userNamespaces = userNamespaceCapability(probe, facts);
  return {
    landlock,
    seccomp,
    seccompUserNotif,
    userNamespaces,
    netNamespaces: namespaceCapability(probe.netns, 'CLONE_NEWNET', userNamespaces),
    mountNamespaces: namespaceCapability(probe.mountns, 'CLONE_NEWNS', userNamespaces),
    pidNamespaces: namespaceCapability(probe.pidns, 'CLONE_NEWPID', userNamespaces),
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
    usernsSysctls: readUsernsSysctls(),
    uid,
  };
}

function readNumber(path: string): number | undefined {
  const text = readOr(path, '').trim();
  return /^-?\d+$/.test(text) ? Number(text) : undefined;
}

function readUsernsSysctls(): UsernsSysctls {
  const out: UsernsSysctls = {};
  const clone = readNumber('/proc/sys/kernel/unprivileged_userns_clone');
  const max = readNumber('/proc/sys/user/max_user_namespaces');
  const apparmor = readNumber('/proc/sys/kernel/apparmor_restrict_unprivileged_userns');
  if (clone !== undefined) out.unprivilegedUsernsClone = clone;
  if (max !== undefined) out.maxUserNamespaces = max;
  if (apparmor !== undefined) out.apparmorRestrictUserns = apparmor;
  return out;
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
