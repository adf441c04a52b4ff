// The hidden re-exec subcommands (_landlock, _seccomp, _net-guard). They are rune's sandbox
// protocol: synchronous, loading nothing but the native addon, never listed in --help.
import type { ModeContext } from '../core/bundles.ts';
import { RuneError } from '../core/errors.ts';

export function run(context: ModeContext): number {
  const sub = context.args[0] ?? '';
  throw new RuneError('SANDBOX_UNAVAILABLE', `${sub}: the sandbox layers are not available in this build`);
}
