// Runs `rune sandbox` for the attack batteries: as the host runs it, or under a container
// runtime's default seccomp profile (tests/helpers/container-seccomp.py), where no namespace can
// be created and what is left of the sandbox must still stop what it can. Also reads the layer
// report `--layers` prints.
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { type RunResult, requireBinary } from '../helpers/rune.ts';

export type Mode = 'host' | 'container';

/** Debian's python: it has python3-seccomp (another python3 may come first on PATH). */
export const SYSTEM_PYTHON = '/usr/bin/python3';
export const CONTAINER_SECCOMP = join(import.meta.dirname, '../helpers/container-seccomp.py');

/** Why the container mode cannot run on this machine, or undefined when it can. */
export function containerModeProblem(): string | undefined {
  const probe = spawnSync(SYSTEM_PYTHON, [CONTAINER_SECCOMP, '--', '/bin/true'], { encoding: 'utf8' });
  if (probe.error) return `${SYSTEM_PYTHON} cannot run: ${probe.error.message}`;
  if (probe.status !== 0) return `container-seccomp.py failed: ${probe.stderr.trim()}`;
  return undefined;
}

export interface SandboxCall {
  mode: Mode;
  /** Arguments after `rune` (global options, `sandbox`, its options, `--`, the command). */
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** What rune gets as fd 3, 4, … */
  extraFds?: number[];
  stdin?: string;
  timeoutMs?: number;
}

export function runSandbox(call: SandboxCall): Promise<RunResult> {
  const rune = requireBinary();
  const [file, args] =
    call.mode === 'container'
      ? [SYSTEM_PYTHON, [CONTAINER_SECCOMP, '--', rune, ...call.args]]
      : [rune, call.args];
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: call.cwd,
      env: call.env,
      stdio: ['pipe', 'pipe', 'pipe', ...(call.extraFds ?? [])],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
    });
    child.stderr?.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), call.timeoutMs ?? 50_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin?.end(call.stdin ?? '');
  });
}

export interface LayerState {
  applied: boolean;
  detail: string;
}

/** The `rune sandbox layers:` block of stderr, by layer. */
export function parseLayers(stderr: string): Map<string, LayerState> {
  const layers = new Map<string, LayerState>();
  for (const line of stderr.split('\n')) {
    const m = /^ {2}(\S+)\s+(applied|SKIPPED)\s+(.*)$/.exec(line);
    if (m?.[1] && m[2] && m[3] !== undefined) layers.set(m[1], { applied: m[2] === 'applied', detail: m[3] });
  }
  return layers;
}

/** Python snippet calling a raw syscall; prints "<return> <errno name>". */
export function pySyscall(nr: number | string, ...args: (number | string)[]): string {
  const list = args.map((a) => `ctypes.c_long(${a})`).join(', ');
  return `${SYSTEM_PYTHON} -c 'import ctypes, errno; libc = ctypes.CDLL(None, use_errno=True); r = libc.syscall(ctypes.c_long(${nr})${list ? `, ${list}` : ''}); print(r, errno.errorcode.get(ctypes.get_errno(), 0))'`;
}
