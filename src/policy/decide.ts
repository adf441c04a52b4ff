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
import type { AllowlistSuggestion, PolicyDecision, ToolCallForPolicy } from './types.ts';

export type { EffectiveLists, PolicyInput };
// approval.ts judges what an approval grants with the same answers.
export { readable, writable };

const READ_TOOLS = new Set(['read_file', 'list_dir', 'search_files', 'find_files']);
const WRITE_TOOLS = new Set(['write_file', 'edit_file']);
/** Tools that walk a folder: `path` may be left out and means the working directory. */
const WALK_TOOLS = new Set(['search_files', 'find_files']);

/** The path a file tool names: its `path` argument, or '.' for a walk without one. */
function toolPath(call: ToolCallForPolicy): unknown {
  const path = call.args.path;
  return path === undefined && WALK_TOOLS.has(call.tool) ? '.' : path;
}
const NOTES_TOOLS = new Set(['read_markdown', 'write_markdown', 'list_markdown', 'search_chat']);

/** The lexical absolute paths a call names, which the gate must canonicalise before deciding. */
export function callPaths(
  call: ToolCallForPolicy,
  cwd: string,
  home: string,
  shell?: ShellAnalysis,
): string[] {
  if (call.source !== 'builtin') return [];
  const path = toolPath(call);
  if ((READ_TOOLS.has(call.tool) || WRITE_TOOLS.has(call.tool)) && typeof path === 'string' && path !== '') {
    return [absolutePath(path, cwd, home)];
  }
  if (call.tool === 'execute_cmd' && shell?.ok) {
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
  if (call.source !== 'builtin' || call.tool !== 'execute_cmd' || !shell?.ok) return [];
  return commandPaths(shell, cwd, home)
    .filter((entry) => entry.glob && !globAcrossFolders(entry.path))
    .map((entry) => entry.path);
}

export function decide(input: PolicyInput): PolicyDecision {
  const { call, mode } = input;
  if (mode === 'unrestricted') return { kind: 'allow', rule: 'mode.unrestricted' };
  if (call.source === 'mcp') return decideMcp(input);
  if (NOTES_TOOLS.has(call.tool)) return { kind: 'allow', rule: 'notes.own-files' };
  switch (call.tool) {
    case 'read_file':
    case 'list_dir':
    case 'search_files':
    case 'find_files':
      return decidePath(input, 'read');
    case 'write_file':
    case 'edit_file':
      return decidePath(input, 'write');
    case 'execute_cmd':
      return decideCommand(input);
    case 'fetch_url':
      return decideUrl(input);
    case 'inspect_process':
      return { kind: 'allow', rule: 'tool.inspect_process' };
    default:
      return { kind: 'deny', reason: `unknown tool "${call.tool}"`, rule: 'tool.unknown' };
  }
}

function decidePath(input: PolicyInput, access: 'read' | 'write'): PolicyDecision {
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
  const folder = input.call.tool === 'list_dir' || WALK_TOOLS.has(input.call.tool);
  const suggestion: AllowlistSuggestion = folder
    ? { list: 'allowed_paths_ro', value: canonical }
    : { list: access === 'read' ? 'allowed_files_ro' : 'allowed_files_rw', value: canonical };
  const shown = canonical === lexical ? canonical : `${lexical} (${canonical})`;
  const verb =
    access === 'write'
      ? input.call.tool === 'edit_file'
        ? 'Edit'
        : 'Write'
      : WALK_TOOLS.has(input.call.tool)
        ? 'Search'
        : folder
          ? 'List'
          : 'Read';
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
