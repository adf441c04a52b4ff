// Runs the built binary in the four ways the deputy batteries (tests/sandbox/deputy*.test.ts) try
// every case: as the host runs rune (namespaces) or under a container runtime's default seccomp
// profile (container: no namespace can be made), as root or as an unprivileged user with a fresh
// HOME (setpriv to nobody when the tests run as root; the test's own user otherwise). Also finds
// the processes a case left behind.
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type RunResult, requireBinary, run } from '../helpers/rune.ts';
import { CONTAINER_SECCOMP, containerModeProblem, type Mode, SYSTEM_PYTHON } from './harness.ts';

export type Who = 'root' | 'user';

export interface Variant {
  mode: Mode;
  who: Who;
  /** "namespaces, root" and the like, for test names. */
  label: string;
}

export const IS_ROOT = process.getuid?.() === 0;
const NOBODY = 65534;

/** The variants this machine can run: root only when the tests run as root. */
export function variants(): Variant[] {
  const out: Variant[] = [];
  for (const mode of ['host', 'container'] as const)
    for (const who of IS_ROOT ? (['root', 'user'] as const) : (['user'] as const))
      out.push({ mode, who, label: `${mode === 'host' ? 'namespaces' : 'container'}, ${who}` });
  return out;
}

/** Why container mode cannot run here (python3-seccomp missing), or undefined. */
export const containerProblem = (): string | undefined => containerModeProblem();

/**
 * A folder for one test file, outside /tmp (the sandbox's private /tmp would hide it), that every
 * variant's user may enter.
 */
export function battleground(prefix: string): {
  root: string;
  dir(name: string, who: Who): string;
  cleanup(): void;
} {
  const root = mkdtempSync(join('/var/tmp', prefix));
  chmodSync(root, 0o755);
  return {
    root,
    dir(name, who) {
      const path = join(root, name);
      mkdirSync(path, { recursive: true, mode: 0o755 });
      if (who === 'user' && IS_ROOT) chownSync(path, NOBODY, NOBODY);
      return path;
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** Hands a file made by the test to the variant's user. */
export function giveTo(path: string, who: Who): void {
  if (who === 'user' && IS_ROOT) chownSync(path, NOBODY, NOBODY);
}

/** Hands a folder made by the test, and everything in it, to the variant's user. */
export function giveTreeTo(path: string, who: Who): void {
  if (who === 'user' && IS_ROOT) execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, path]);
}

export interface VariantRun {
  args: readonly string[];
  /** What runs instead of the binary itself (a name linked to it: Concourse's `in`). */
  program?: string;
  cwd: string;
  env: Record<string, string>;
  input?: string;
  timeoutMs?: number;
  /** Programs put before everything (a private mount namespace set up as root, say). */
  wrap?: readonly string[];
  /** Called with the pid of what was spawned, once it runs. */
  started?: (pid: number) => void;
}

/** The argv that runs rune as the variant says. */
export function variantArgv(v: Variant, run: Pick<VariantRun, 'args' | 'wrap' | 'program'>): string[] {
  const drop =
    v.who === 'user' && IS_ROOT
      ? [
          '/usr/bin/setpriv',
          `--reuid=${NOBODY}`,
          `--regid=${NOBODY}`,
          '--clear-groups',
          '--inh-caps=-all',
          '--',
        ]
      : [];
  const container = v.mode === 'container' ? [SYSTEM_PYTHON, CONTAINER_SECCOMP, '--'] : [];
  return [...(run.wrap ?? []), ...drop, ...container, run.program ?? requireBinary(), ...run.args];
}

export function runVariant(v: Variant, options: VariantRun): Promise<RunResult> {
  const [file, ...args] = variantArgv(v, options);
  return run(file as string, args, {
    cwd: options.cwd,
    env: options.env,
    input: options.input ?? '',
    timeoutMs: options.timeoutMs ?? 60_000,
    ...(options.started ? { started: options.started } : {}),
  });
}

/** A `sleep` duration no other test uses: its command line marks the processes of one case. */
let markers = 0;
export function uniqueMarker(): string {
  markers += 1;
  return `${700 + (process.pid % 200)}.${markers}${Math.floor(Math.random() * 1e6)}`;
}

/** Pids of the processes whose command line holds `marker` (or starts with it: `start`), seen from the host. */
export function processesWith(marker: string, start = false): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ');
      if (start ? cmdline.startsWith(marker) : cmdline.includes(marker)) found.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/** Kills what a case (or its control) left, so a failing case leaves nothing behind. */
export function killAll(marker: string): void {
  for (const pid of processesWith(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The processes holding `marker` a moment after the call ended (a straggler gets time to show). */
export async function survivors(marker: string): Promise<number[]> {
  await pause(300);
  return processesWith(marker);
}
