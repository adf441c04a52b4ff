// The kernel probe (native/src/probe.c: Landlock ABI, seccomp, which namespaces this process may
// create) kept across runs, so `rune sandbox -- CMD` and a run's first tool call do not start the
// helper once more only to learn what the last run learnt. The answer depends on the kernel, the
// boot, the binary and the process's own confinement, so all of those are the key: a new kernel, a
// reboot, a new build, another container, another seccomp filter stacked on rune, another user or
// a changed user-namespace sysctl each probe again. The file decides which layers are applied, so
// it is read with the same checks as a V8 code cache (src/core/private-dir.ts), and only a
// well-formed probe is believed.
import { readFileSync, readlinkSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { release, version } from 'node:os';
import { dirname, join } from 'node:path';
import { makeDir } from '../core/make-dir.ts';
import { cacheDir } from '../core/paths.ts';
import { checkPrivateDir, readPrivateFile } from '../core/private-dir.ts';
import { type KernelProbe, PROBE_FIELDS } from './native-contract.ts';

function readOr(path: string, read: (path: string) => string): string {
  try {
    return read(path).trim();
  } catch {
    return '';
  }
}

/** The status lines that say how this process is confined (seccomp, no_new_privs, capabilities). */
const STATUS_KEYS = /^(Uid|Gid|Groups|CapEff|CapBnd|NoNewPrivs|Seccomp|Seccomp_filters):/;

/**
 * Everything the probe's answer depends on, as one string. Cheap: a few reads under /proc and one
 * stat, no process started. `binaryId` names the helper that probes (its sha256 in the manifest).
 */
export function probeContext(binaryId: string, execPath = process.execPath): string {
  const text = (path: string) => readOr(path, (p) => readFileSync(p, 'utf8'));
  const link = (path: string) => readOr(path, readlinkSync);
  let binary = '';
  try {
    const st = statSync(execPath);
    binary = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
  } catch {
    binary = 'unknown';
  }
  const status = text('/proc/self/status')
    .split('\n')
    .filter((line) => STATUS_KEYS.test(line))
    .join(';');
  return JSON.stringify({
    kernel: `${release()} ${version()}`,
    boot: text('/proc/sys/kernel/random/boot_id'),
    binary: `${execPath} ${binary} ${binaryId}`,
    status,
    namespaces: ['user', 'mnt', 'pid', 'net', 'cgroup', 'ipc', 'uts'].map((ns) =>
      link(`/proc/self/ns/${ns}`),
    ),
    lsm: text('/proc/self/attr/current'),
    sysctls: [
      '/proc/sys/kernel/unprivileged_userns_clone',
      '/proc/sys/user/max_user_namespaces',
      '/proc/sys/kernel/apparmor_restrict_unprivileged_userns',
      '/proc/sys/kernel/seccomp/actions_avail',
    ].map(text),
  });
}

/** Whether a seccomp filter rune did not install confines this process (a container runtime's). */
export function underOutsideSeccompFilter(
  status = readOr('/proc/self/status', (p) => readFileSync(p, 'utf8')),
): boolean {
  const filters = /^Seccomp_filters:\s*(\d+)/m.exec(status)?.[1];
  const mode = /^Seccomp:\s*(\d+)/m.exec(status)?.[1];
  return (filters !== undefined && Number(filters) > 0) || mode === '2';
}

/** A probe as stored, or undefined when any field of the record is missing or not an integer. */
export function validProbe(value: unknown): KernelProbe | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  for (const field of PROBE_FIELDS) if (!Number.isInteger(record[field])) return undefined;
  return probeOf((field) => record[field] as number);
}

/** A probe with each field of the record from `value`. */
export function probeOf(value: (field: keyof KernelProbe) => number): KernelProbe {
  return Object.fromEntries(PROBE_FIELDS.map((field) => [field, value(field)])) as unknown as KernelProbe;
}

export function probeCacheFile(): string {
  return join(cacheDir(), 'probe', 'kernel.json');
}

/** The stored probe when it was made in this very context. */
export function readCachedProbe(context: string, file = probeCacheFile()): KernelProbe | undefined {
  if (!checkPrivateDir(dirname(file)).ok) return undefined;
  const bytes = readPrivateFile(file);
  if (!bytes) return undefined;
  try {
    const stored = JSON.parse(bytes.toString('utf8')) as { context?: unknown; probe?: unknown };
    return stored.context === context ? validProbe(stored.probe) : undefined;
  } catch {
    return undefined;
  }
}

/** Best-effort: a home that cannot be written only costs the next start one probe. */
export function writeCachedProbe(context: string, probe: KernelProbe, file = probeCacheFile()): void {
  try {
    const dir = dirname(file);
    makeDir(dir);
    if (!checkPrivateDir(dir).ok) return;
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ context, probe }), { mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    // Best-effort by design.
  }
}

/**
 * The probe of this context from the cache, else from `probe` (then stored). `probe` answers
 * undefined when it could not really probe (its fallback's guess is never stored).
 */
export function cachedKernelProbe(
  binaryId: string,
  probe: () => KernelProbe | undefined,
  file = probeCacheFile(),
  context = probeContext(binaryId),
  stacked = underOutsideSeccompFilter(),
): KernelProbe | undefined {
  // Two different filters stacked on rune (Docker's profile, then a stricter one) read the same in
  // /proc/self/status, so nothing in the context tells them apart: under any outside filter the
  // probe is made afresh each run and never stored, or a run could plan with layers it lacks.
  if (stacked) return probe();
  const cached = readCachedProbe(context, file);
  if (cached) return cached;
  const fresh = probe();
  if (fresh && validProbe(fresh)) writeCachedProbe(context, fresh, file);
  return fresh;
}
