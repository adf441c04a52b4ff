// Test support: decides an execute_cmd line the way the gate does, with identity canonicalisation
// (every path is taken to be canonical already) and globs that match nothing; gate.test.ts lists
// real folders. /home/u/proj is the readable working directory, /home/u/proj/out is writable.
import type { PolicyMode } from '../config/schema.ts';
import { type DomainPattern, parseDomainPattern } from '../core/domains.ts';
import { callGlobs, callPaths, decide, type EffectiveLists } from './decide.ts';
import type { SandboxFacts } from './decide-kit.ts';
import { floorPaths } from './paths.ts';
import { parseShell } from './shell-parser.ts';
import { toolAccess } from './test-helpers.ts';
import type { PolicyDecision, ToolCallForPolicy } from './types.ts';

export const HOME = '/home/u';
export const CWD = '/home/u/proj';

export function lists(overrides: Partial<EffectiveLists> = {}): EffectiveLists {
  return {
    commands: ['ls', 'echo', 'cat', 'find', 'rg', 'sed', 'git', 'grep'],
    domains: ['*.github.com', 'example.org:8443', '10.0.0.1'].map(
      (entry) => parseDomainPattern(entry) as DomainPattern,
    ),
    pathsRo: [CWD],
    pathsRw: [`${CWD}/out`],
    filesRo: [],
    filesRw: [],
    denied: [`${CWD}/private`],
    mcpTools: ['fs.*', 'search'],
    ...overrides,
  };
}

export interface DecideOptions {
  mode?: PolicyMode;
  lists?: Partial<EffectiveLists>;
  sandbox?: SandboxFacts;
}

export function decideCall(call: ToolCallForPolicy, options: DecideOptions = {}): PolicyDecision {
  const shell = call.access?.kind === 'command' ? parseShell(String(call.args.cmd)) : undefined;
  const canonical = Object.fromEntries(callPaths(call, CWD, HOME, shell).map((path) => [path, path]));
  const globs = Object.fromEntries(callGlobs(call, CWD, HOME, shell).map((pattern) => [pattern, []]));
  return decide({
    call,
    mode: options.mode ?? 'allowlist',
    lists: lists(options.lists),
    floor: floorPaths(HOME, `${HOME}/.rune`),
    cwd: CWD,
    home: HOME,
    canonical,
    globs,
    ...(shell ? { shell } : {}),
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
  });
}

export const cmd = (text: string): ToolCallForPolicy => ({
  tool: 'execute_cmd',
  args: { cmd: text },
  source: 'builtin',
  access: toolAccess('execute_cmd'),
});

export function decideCmd(text: string, options: DecideOptions = {}): PolicyDecision {
  return decideCall(cmd(text), options);
}
