// Which of rune's programs an invocation means (docs/adr/0001-architecture.md), decided from the
// invoked name and the first argument before any option parser runs. Pure, so the order of the rules is tested directly.
import type { ModeName } from './core/bundles.ts';
import { parseSandboxInvocation } from './sandbox/argv.ts';

const CONCOURSE_NAMES = new Set(['check', 'in', 'out']);
/** The hidden re-exec protocol of the sandbox; never listed in --help, never renamed. */
export const SANDBOX_SUBCOMMANDS: ReadonlySet<string> = new Set(['_landlock', '_seccomp', '_net-guard']);

export interface Dispatch {
  mode: ModeName | 'version';
  args: string[];
}

export function chooseMode(invokedAs: string, args: readonly string[]): Dispatch {
  if (CONCOURSE_NAMES.has(invokedAs)) return { mode: 'concourse', args: [...args] };
  const first = args[0];
  if (first !== undefined && SANDBOX_SUBCOMMANDS.has(first)) return { mode: 'sandbox', args: [...args] };
  if (first === 'notes') return { mode: 'notes', args: args.slice(1) };
  // `rune help notes` means `rune notes --help`, as `rune help doctor` means `rune doctor --help`.
  if (first === 'help' && args.length === 2 && args[1] === 'notes')
    return { mode: 'notes', args: ['--help'] };
  // `rune sandbox -- CMD` needs none of the cli bundle (commander, agent, providers): a plain form
  // runs from the sandbox bundle; help and anything unusual still goes through commander.
  if (parseSandboxInvocation(args)) return { mode: 'sandbox', args: [...args] };
  if (args.length === 1 && (first === '--version' || first === '-V')) return { mode: 'version', args: [] };
  return { mode: 'cli', args: [...args] };
}
