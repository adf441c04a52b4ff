// What a run needs beyond its options, built from the configuration when the caller did not inject
// it: the model provider, the policy gate and the sandbox executor.
import { createPolicyGate } from '../policy/gate.ts';
import type { PolicyGate } from '../policy/types.ts';
import { createProvider } from '../providers/index.ts';
import type { Provider } from '../providers/types.ts';
import { createSandboxExecutor } from '../sandbox/executor.ts';
import type { SandboxExecutor } from '../sandbox/types.ts';
import type { AgentRunOptions } from './types.ts';

export async function createDefaultProvider(options: AgentRunOptions): Promise<Provider> {
  return createProvider({ config: options.config, env: options.env, logger: options.logger });
}

export function createDefaultExecutor(options: AgentRunOptions): SandboxExecutor {
  return createSandboxExecutor({
    config: options.config,
    logger: options.logger,
    mode: options.config.sandbox.mode,
  });
}

export async function createDefaultPolicy(options: AgentRunOptions, sessionId: string): Promise<PolicyGate> {
  // Concourse inputs (readPaths) join the readable folders for this run only.
  const config =
    options.readPaths && options.readPaths.length > 0
      ? {
          ...options.config,
          policy: {
            ...options.config.policy,
            allowed_paths_ro: [...options.config.policy.allowed_paths_ro, ...options.readPaths],
          },
        }
      : options.config;
  return createPolicyGate({
    config,
    cwd: options.cwd,
    env: options.env,
    interactive: options.confirmer !== undefined,
    yes: options.yes ?? false,
    ...(options.confirmer ? { confirmer: options.confirmer } : {}),
    sessionId,
    logger: options.logger,
  });
}
