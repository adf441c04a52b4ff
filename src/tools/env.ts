// The environment tool processes get: the sandbox's allow list (src/sandbox/env.ts) plus the exact
// names sandbox.env_passthrough lists. rune's own settings (RUNE_*) are never on it.
import { allowedEnvironment } from '../sandbox/env.ts';

export function toolEnvironment(
  env: NodeJS.ProcessEnv,
  passthrough: readonly string[],
): Record<string, string> {
  return allowedEnvironment(env, passthrough).env;
}
