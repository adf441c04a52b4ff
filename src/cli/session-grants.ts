// Confirm mode's "yes, for this session": what such an answer covers from then on. Edits of files
// under one folder, or one command's prefix when the command is a single simple command; never a
// call the policy asks about for another reason (a git hook, a redirection, a dangerous flag).
// Pure: the confirmer answers from these without asking again.
import { dirname, relative, resolve } from 'node:path';
import { isUnder } from '../core/paths.ts';
import type { AllowlistSuggestion, ApprovalRequest, Grant, ToolCallForPolicy } from '../policy/types.ts';

export type SessionGrant =
  | { kind: 'edits'; folder: string }
  | { kind: 'command'; prefix: string }
  | { kind: 'entry'; tool: string; suggestion: AllowlistSuggestion };

/** The question as the gate asks it: the decision and the entries approving it adds. */
type Ask = Pick<ApprovalRequest, 'rule' | 'suggestion' | 'grants'>;

const WRITE_TOOLS = new Set(['write_file', 'edit_file']);
/** Shell syntax that chains, substitutes or redirects: such a command is asked about every time. */
const SHELL_SYNTAX = /[;&|`$()<>\n\\*?[\]{}!#~'"]/;

/** The words a command's session grant is for: the program, and its subcommand or module. */
export function commandPrefix(cmd: string): string | undefined {
  const text = cmd.trim();
  if (text === '' || SHELL_SYNTAX.test(text)) return undefined;
  const words = text.split(/\s+/);
  const [program, second, third] = words;
  if (!program || /[=/]/.test(program)) return undefined;
  if (second === '-m' && third && /^[\w.]+$/.test(third)) return `${program} -m ${third}`;
  if (second && /^[a-z][\w:-]*$/i.test(second)) return `${program} ${second}`;
  return program;
}

/**
 * Whether approving the question adds nothing beyond what the session grant stands for: the
 * program's allowed_commands entry for a command prefix, writes under the folder for edits, the one
 * entry for an entry. Anything more (a write outside the folders, a read, a domain) is asked again.
 */
function standsFor(grant: SessionGrant, grants: readonly Grant[]): boolean {
  return grants.every((entry) => addsNothingMore(grant, entry));
}

function addsNothingMore(grant: SessionGrant, entry: Grant): boolean {
  switch (grant.kind) {
    case 'command':
      return entry.list === 'allowed_commands' && entry.value === grant.prefix.split(' ')[0];
    case 'edits':
      return (
        (entry.list === 'allowed_files_rw' || entry.list === 'allowed_paths_rw') &&
        isUnder(entry.value, grant.folder)
      );
    case 'entry':
      return entry.list === grant.suggestion.list && entry.value === grant.suggestion.value;
  }
}

/** The grant "yes, for this session" would make for this question, if one fits. */
export function grantFor(call: ToolCallForPolicy, decision: Ask, cwd: string): SessionGrant | undefined {
  const grant = candidate(call, decision, cwd);
  return grant && standsFor(grant, decision.grants) ? grant : undefined;
}

function candidate(call: ToolCallForPolicy, decision: Ask, cwd: string): SessionGrant | undefined {
  if (call.source === 'builtin' && WRITE_TOOLS.has(call.tool)) {
    if (decision.rule !== 'path.not-allowed' || typeof call.args.path !== 'string') return undefined;
    const path = decision.suggestion?.value ?? resolve(cwd, call.args.path);
    return { kind: 'edits', folder: isUnder(path, cwd) ? cwd : dirname(path) };
  }
  if (call.source === 'builtin' && call.tool === 'execute_cmd') {
    if (decision.rule !== 'command.not-allowed' || typeof call.args.cmd !== 'string') return undefined;
    const prefix = commandPrefix(call.args.cmd);
    return prefix ? { kind: 'command', prefix } : undefined;
  }
  return decision.suggestion
    ? { kind: 'entry', tool: call.tool, suggestion: decision.suggestion }
    : undefined;
}

/** The grant that answers this question already, if any. */
export function coveringGrant(
  grants: readonly SessionGrant[],
  call: ToolCallForPolicy,
  decision: Ask,
  cwd: string,
): SessionGrant | undefined {
  const wanted = grantFor(call, decision, cwd);
  if (!wanted) return undefined;
  return grants.find(
    (grant) => standsFor(grant, decision.grants) && covers(grant, wanted, call, decision, cwd),
  );
}

function covers(
  grant: SessionGrant,
  wanted: SessionGrant,
  call: ToolCallForPolicy,
  decision: Ask,
  cwd: string,
): boolean {
  if (grant.kind === 'edits' && wanted.kind === 'edits') {
    const path = decision.suggestion?.value ?? resolve(cwd, String(call.args.path));
    return isUnder(path, grant.folder);
  }
  if (grant.kind === 'command' && wanted.kind === 'command') {
    const cmd = String(call.args.cmd).trim();
    return cmd === grant.prefix || cmd.startsWith(`${grant.prefix} `);
  }
  return (
    grant.kind === 'entry' &&
    wanted.kind === 'entry' &&
    grant.tool === wanted.tool &&
    grant.suggestion.list === wanted.suggestion.list &&
    grant.suggestion.value === wanted.suggestion.value
  );
}

/** How the menu and the transcript name a grant. */
export function describeGrant(grant: SessionGrant, cwd: string): string {
  switch (grant.kind) {
    case 'edits': {
      const shown = relative(cwd, grant.folder);
      return `edits in ${shown === '' ? 'this folder' : grant.folder}`;
    }
    case 'command':
      return `commands starting with "${grant.prefix}"`;
    case 'entry':
      return `${grant.tool} on ${grant.suggestion.value}`;
  }
}
