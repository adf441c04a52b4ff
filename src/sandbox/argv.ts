// Recognises the plain forms of `rune sandbox … -- CMD …` before commander is loaded, so that command
// runs from the small sandbox bundle. Anything it is not sure about (help, unknown or repeated-dash
// values, other program flags, no `--`) is left to commander in the cli bundle, which then behaves
// exactly as before; argv.test.ts checks every accepted form against commander's own parse.
// -v/--verbose is accepted on either side of `sandbox`, as commander takes it: the README promises
// its NDJSON diagnostics (the helper's command line among them) for `rune -v sandbox -- CMD`.
import type { SandboxCommandOptions } from './command.ts';

export interface SandboxInvocation {
  command: string[];
  options: SandboxCommandOptions;
}

/** Options with a value: program-level ones (valid before and after `sandbox`) and the command's. */
const VALUE_FLAGS: Record<string, 'sandbox' | 'config' | 'allowRead' | 'allowWrite' | 'allowDomain'> = {
  '--sandbox': 'sandbox',
  '--config': 'config',
  '-c': 'config',
  '--allow-read': 'allowRead',
  '--allow-write': 'allowWrite',
  '--allow-domain': 'allowDomain',
};
const COMMAND_ONLY = new Set(['allowRead', 'allowWrite', 'allowDomain']);

export function parseSandboxInvocation(args: readonly string[]): SandboxInvocation | undefined {
  // Lists stay absent until given, exactly as commander leaves them (no defaults on those options).
  const options: SandboxCommandOptions = {};
  let seenSubcommand = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') {
      const command = args.slice(i + 1);
      if (!seenSubcommand || command.length === 0) return undefined;
      return { command, options };
    }
    if (arg === 'sandbox' && !seenSubcommand) {
      seenSubcommand = true;
      continue;
    }
    if (arg === '-v' || arg === '--verbose') {
      options.verbose = true;
      continue;
    }
    if (arg === '--layers' && seenSubcommand) {
      options.layers = true;
      continue;
    }
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const key = VALUE_FLAGS[flag];
    if (key === undefined || (COMMAND_ONLY.has(key) && !seenSubcommand)) return undefined;
    let value: string | undefined;
    if (eq > 0) value = arg.slice(eq + 1);
    else {
      value = args[++i];
      // commander would take a dash-led word as the value; rare enough to leave to it.
      if (value === undefined || value.startsWith('-')) return undefined;
    }
    if (key === 'sandbox' || key === 'config') options[key] = value;
    else options[key] = [...(options[key] ?? []), value];
  }
  return undefined;
}
