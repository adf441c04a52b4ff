// What the agent, the tools and the MCP client see of the sandbox: run a command (or start a
// long-lived process) inside every layer this machine offers, and say which layers were applied.
import type { Grants } from '../core/fd/index.ts';

import type { LAYER_ORDER } from './native-contract.ts';

/** A layer of the helper's report (declared once, in native/src/helper_contract.h). */
export type LayerName = (typeof LAYER_ORDER)[number];

export interface LayerReport {
  layer: LayerName;
  applied: boolean;
  /** What was enforced when applied (e.g. "ABI 7, 4 ro + 1 rw paths"), the reason when skipped. */
  detail: string;
}

export interface SandboxRequest {
  /** argv; execute_cmd passes ['/bin/sh', '-c', text]. */
  argv: string[];
  cwd: string;
  /**
   * The caller's environment. The executor passes on only its allow list (src/sandbox/env.ts:
   * PATH, HOME, locale, … and `[sandbox] env_passthrough`), whatever the caller sends.
   */
  env: Record<string, string>;
  /** Variables set on purpose by the configuration (an MCP table's `env`), passed as they are. */
  configuredEnv?: Record<string, string>;
  readOnlyPaths: string[];
  readWritePaths: string[];
  /**
   * The run's pinned grants (src/core/fd/grants.ts): a grant whose path was replaced since it was
   * pinned (a link or another folder left in its place) refuses the call. Without: resolved now.
   */
  grants?: Grants;
  /** Host names the process may reach; empty means no network at all. */
  allowedDomains: string[];
  /** Wall-clock limit; the whole process group is killed when it expires. */
  timeoutMs: number;
  /** Each of stdout and stderr is capped at this many bytes (the rest is counted, not kept). */
  maxOutputBytes: number;
  stdin?: string;
  signal?: AbortSignal;
}

export interface SandboxResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** Bytes dropped beyond maxOutputBytes. */
  stdoutDropped: number;
  stderrDropped: number;
  timedOut: boolean;
  cancelled: boolean;
  layers: LayerReport[];
  durationMs: number;
}

/** A long-lived sandboxed process with stdio pipes (MCP servers). */
export interface SandboxedProcess {
  readonly pid: number | undefined;
  readonly stdin: NodeJS.WritableStream;
  readonly stdout: NodeJS.ReadableStream;
  readonly stderr: NodeJS.ReadableStream;
  /** What the sandbox expects until the helper reports; final once `exited` has resolved. */
  readonly layers: LayerReport[];
  /** Resolves when the process (and its group) has exited. */
  readonly exited: Promise<{ exitCode: number | null; signal: string | null }>;
  /**
   * Signals the process group: SIGKILL by default; another signal (SIGTERM to ask for a clean
   * exit) reaches the command through the sandbox helper, which forwards it.
   */
  kill(signal?: NodeJS.Signals): void;
}

export interface SandboxExecutor {
  run(request: SandboxRequest): Promise<SandboxResult>;
  spawn(request: Omit<SandboxRequest, 'timeoutMs' | 'maxOutputBytes' | 'stdin'>): SandboxedProcess;
  /** The layers a call would get on this machine, with reasons for the skipped ones. */
  describe(): LayerReport[];
  /**
   * After a tool wrote outside the sandbox (write_file) or talked to a long-lived sandboxed process:
   * judges the git folders under these writable roots (and those of live sandboxed processes),
   * undoes settings that would run programs, and returns what was undone for the model.
   */
  checkGit?(roots: readonly string[]): string | undefined;
}
