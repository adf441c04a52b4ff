// The context every tool call of a run gets: the working directory, the sandbox executor, the
// environment tool processes see, the folders the sandbox grants and the paths no tool may touch.
// Built the same way for a model's calls (run.ts) and for calls made through `rune mount`.
import type { RuneConfig } from '../config/schema.ts';
import { absolutePath, homeDir } from '../core/paths.ts';
import { protectedPathsFor } from '../policy/gate.ts';
import type { PolicyGate } from '../policy/types.ts';
import type { SandboxExecutor } from '../sandbox/types.ts';
import { toolEnvironment } from '../tools/env.ts';
import type { ToolContext } from '../tools/types.ts';

export interface ToolContextOptions {
  config: RuneConfig;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Extra folders the tools may read (Concourse inputs). */
  readPaths?: readonly string[];
}

export function toolContextFor(
  options: ToolContextOptions,
  policy: PolicyGate,
  executor: SandboxExecutor,
  signal: AbortSignal,
): ToolContext {
  const { config, cwd } = options;
  const home = homeDir(options.env);
  return {
    cwd,
    config,
    executor,
    env: toolEnvironment(options.env, config.sandbox.env_passthrough),
    readOnlyPaths: [
      cwd,
      ...config.policy.allowed_paths_ro.map((p) => absolutePath(p, cwd, home)),
      ...config.policy.allowed_files_ro.map((p) => absolutePath(p, cwd, home)),
      ...(options.readPaths ?? []),
    ],
    readWritePaths: [
      ...config.policy.allowed_paths_rw.map((p) => absolutePath(p, cwd, home)),
      ...config.policy.allowed_files_rw.map((p) => absolutePath(p, cwd, home)),
    ],
    protectedPaths: policy.protectedPaths?.() ?? protectedPathsFor(config, cwd, options.env),
    signal,
  };
}
