// What a run needs beyond its options, built from the configuration when the caller did not inject
// it: the model provider, the policy gate and the sandbox executor.
import { deriveConfig, settingName } from '../config/load.ts';
import type { RuneConfig } from '../config/schema.ts';
import { createPolicyGate } from '../policy/gate.ts';
import type { PolicyGate } from '../policy/types.ts';
import { createProvider } from '../providers/index.ts';
import type { Provider } from '../providers/types.ts';
import { createSandboxExecutor } from '../sandbox/executor.ts';
import { strictModeError } from '../sandbox/summary.ts';
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

/**
 * Strict mode's check, made before any model call or tool: throws SANDBOX_SETUP (exit 8) naming each
 * missing layer and its cause, and the setting the way this user gave it (`--sandbox`, `source.…`).
 */
export function requireStrictLayers(config: RuneConfig, executor: SandboxExecutor): void {
  if (config.sandbox.mode !== 'strict') return;
  const refused = strictModeError(
    executor.describe(),
    settingName(config, 'sandbox.mode', 'sandbox.mode in rune.toml'),
  );
  if (refused) throw refused;
}

/**
 * The gate for a run. With the run's executor it knows whether commands get a private /tmp (the
 * namespaces layer), where writes are then auto-allowed.
 */
export async function createDefaultPolicy(
  options: AgentRunOptions,
  sessionId: string,
  executor?: SandboxExecutor,
): Promise<PolicyGate> {
  // Concourse inputs (readPaths) join the readable folders for this run only.
  const config =
    options.readPaths && options.readPaths.length > 0
      ? deriveConfig(options.config, {
          policy: {
            ...options.config.policy,
            allowed_paths_ro: [...options.config.policy.allowed_paths_ro, ...options.readPaths],
          },
        })
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
    ...(executor
      ? { privateTmp: executor.describe().some((l) => l.layer === 'namespaces' && l.applied) }
      : {}),
  });
}
