// The policy decision: a pure function from a tool call (paths already canonicalised by the gate),
// the effective lists, the mode and the home folder to allow / deny / ask. No I/O, no env, no clock.

import { hostAllowed } from '../core/domains.ts';
import { absolutePath } from '../core/paths.ts';
import { commandPaths, decideCommand } from './decide-command.ts';
import {
  type EffectiveLists,
  floorOrDenied,
  type PolicyInput,
  readable,
  runsLater,
  uncovered,
  writable,
} from './decide-kit.ts';
import { globAcrossFolders } from './paths.ts';
import type { ShellAnalysis } from './shell.ts';
import type { AllowlistSuggestion, PolicyDecision, ToolAccess, ToolCallForPolicy } from './types.ts';

export type { EffectiveLists, PolicyInput };
// approval.ts judges what an approval grants with the same answers.
export { readable, writable };

/** What a call of a rune tool reaches (what its tool declares); MCP tools are judged apart. */
function accessOf(call: ToolCallForPolicy): ToolAccess | undefined {
  return call.source === 'builtin' ? call.access : undefined;
}

/** A rune tool running a shell command: its `cmd` is what is judged. */
export function runsCommand(call: ToolCallForPolicy): boolean {
  return accessOf(call)?.kind === 'command';
}

/** A walk over a tree: `path` may be left out and means the working directory. */
function walks(call: ToolCallForPolicy): boolean {
  const access = accessOf(call);
  return access?.kind === 'read' && access.target === 'tree';
}

/** The path a file tool names: its `path` argument, or '.' for a walk without one. */
function toolPath(call: ToolCallForPolicy): unknown {
  const path = call.args.path;
  return path === undefined && walks(call) ? '.' : path;
}

/** The lexical absolute paths a call names, which the gate must canonicalise before deciding. */
export function callPaths(
  call: ToolCallForPolicy,
  cwd: string,
  home: string,
  shell?: ShellAnalysis,
): string[] {
  const kind = accessOf(call)?.kind;
  const path = toolPath(call);
  if ((kind === 'read' || kind === 'write') && typeof path === 'string' && path !== '') {
    return [absolutePath(path, cwd, home)];
  }
  if (kind === 'command' && shell?.ok) {
    return commandPaths(shell, cwd, home)
      .filter((entry) => !entry.glob)
      .map((entry) => entry.path);
  }
  return [];
}

/** The one-folder glob words of a command (lexical, absolute) whose matches the gate must list. */
export function callGlobs(
  call: ToolCallForPolicy,
  cwd: string,
  home: string,
  shell?: ShellAnalysis,
): string[] {
  if (!runsCommand(call) || !shell?.ok) return [];
  return commandPaths(shell, cwd, home)
    .filter((entry) => entry.glob && !globAcrossFolders(entry.path))
    .map((entry) => entry.path);
}

export function decide(input: PolicyInput): PolicyDecision {
  const { call, mode } = input;
  if (mode === 'unrestricted') return { kind: 'allow', rule: 'mode.unrestricted' };
  if (call.source === 'mcp') return decideMcp(input);
  const access = accessOf(call);
  switch (access?.kind) {
    case 'read':
    case 'write':
      return decidePath(input, access);
    case 'command':
      return decideCommand(input);
    case 'url':
      return decideUrl(input);
    case 'own-files':
      return { kind: 'allow', rule: 'notes.own-files' };
    case 'none':
      return { kind: 'allow', rule: `tool.${call.tool}` };
    case undefined:
      return { kind: 'deny', reason: `unknown tool "${call.tool}"`, rule: 'tool.unknown' };
  }
}

/** The question's verb for each kind of read. */
const READ_VERBS = { file: 'Read', folder: 'List', tree: 'Search' } as const;

function decidePath(
  input: PolicyInput,
  tool: Extract<ToolAccess, { kind: 'read' | 'write' }>,
): PolicyDecision {
  const access = tool.kind;
  const raw = toolPath(input.call);
  if (typeof raw !== 'string' || raw === '') {
    return { kind: 'deny', reason: `${input.call.tool} needs a non-empty "path"`, rule: 'args.invalid' };
  }
  const lexical = absolutePath(raw, input.cwd, input.home);
  const canonical = input.canonical[lexical];
  if (canonical === undefined) {
    return { kind: 'deny', reason: `${raw} could not be resolved`, rule: 'path.unresolved' };
  }
  const blocked = floorOrDenied(input, lexical, canonical);
  if (blocked) return blocked;
  if (access === 'write' && runsLater(canonical)) {
    return uncovered(
      input,
      `${canonical} is run by git or the shell later (hooks, config); writing it is never auto-allowed`,
      'path.runs-later',
      `Write ${canonical}?`,
    );
  }
  const rule = access === 'read' ? readable(input.lists, canonical) : writable(input.lists, canonical);
  if (rule) return { kind: 'allow', rule };
  const folder = tool.kind === 'read' && tool.target !== 'file';
  const suggestion: AllowlistSuggestion = folder
    ? { list: 'allowed_paths_ro', value: canonical }
    : { list: access === 'read' ? 'allowed_files_ro' : 'allowed_files_rw', value: canonical };
  const shown = canonical === lexical ? canonical : `${lexical} (${canonical})`;
  const verb = tool.kind === 'write' ? tool.verb : READ_VERBS[tool.target];
  return uncovered(
    input,
    `${shown} is outside the ${access === 'read' ? 'readable' : 'writable'} paths`,
    'path.not-allowed',
    `${verb} ${shown}?`,
    suggestion,
  );
}

function decideUrl(input: PolicyInput): PolicyDecision {
  const raw = input.call.args.url;
  let url: URL;
  try {
    url = new URL(String(raw));
  } catch {
    return { kind: 'deny', reason: `"${String(raw)}" is not a URL`, rule: 'args.invalid' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return {
      kind: 'deny',
      reason: `only http and https URLs can be fetched, not ${url.protocol}`,
      rule: 'url.scheme',
    };
  }
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (hostAllowed(host, port, input.lists.domains)) return { kind: 'allow', rule: 'allowed_domains' };
  return uncovered(input, `${host} is not in allowed_domains`, 'domain.not-allowed', `Fetch ${url.href}?`, {
    list: 'allowed_domains',
    value: host,
  });
}

function decideMcp(input: PolicyInput): PolicyDecision {
  const { call } = input;
  const qualified = call.server ? `${call.server}.${call.tool}` : call.tool;
  const hit = input.lists.mcpTools.find(
    (entry) =>
      entry === call.tool ||
      entry === qualified ||
      (call.server !== undefined && entry === `${call.server}.*`),
  );
  if (hit) return { kind: 'allow', rule: 'allowed_mcp_tools' };
  if (call.readOnly) return { kind: 'allow', rule: 'mcp.read-only' };
  return uncovered(
    input,
    `MCP tool ${qualified} is not in allowed_mcp_tools`,
    'mcp.not-allowed',
    `Call MCP tool ${qualified}?`,
    { list: 'allowed_mcp_tools', value: call.tool },
  );
}
