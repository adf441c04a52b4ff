// What approving an `ask` allows, and what an answer does (docs/adr/0033-run-outcomes.md). Pure:
// the grants are the allow-list entries that make exactly this call pass, found by deciding again
// with them added; the gate then gives them to the call's sandbox plan (once), its own lists (for
// the session) or rune.toml too (always).
import { parseDomainPattern } from '../core/domains.ts';
import { absolutePath } from '../core/paths.ts';
import { decide, type EffectiveLists, type PolicyInput, readable, runsCommand, writable } from './decide.ts';
import { directoryBases } from './directories.ts';
import type {
  ApprovalAnswer,
  ApprovalRequest,
  ApprovalScope,
  AskDecision,
  ConfirmAnswer,
  Grant,
} from './types.ts';

const SAFE_SINKS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr']);
/** A call needs few entries; past this many rounds the grants are not taken to cover it for good. */
const MAX_ROUNDS = 8;

// Where each list's grants go in the effective lists (domains are parsed first).
const FIELD = {
  allowed_commands: 'commands',
  allowed_paths_ro: 'pathsRo',
  allowed_paths_rw: 'pathsRw',
  allowed_files_ro: 'filesRo',
  allowed_files_rw: 'filesRw',
  allowed_mcp_tools: 'mcpTools',
} as const satisfies Record<Exclude<Grant['list'], 'allowed_domains'>, keyof EffectiveLists>;

/** The lists with the grants added (paths in grants are already absolute and canonical). */
export function withGrants(lists: EffectiveLists, grants: readonly Grant[]): EffectiveLists {
  const out = { ...lists };
  for (const grant of grants) {
    if (grant.list === 'allowed_domains') {
      const pattern = parseDomainPattern(grant.value);
      if (typeof pattern !== 'string') out.domains = [...out.domains, pattern];
    } else {
      const field = FIELD[grant.list];
      out[field] = [...out[field], grant.value];
    }
  }
  return out;
}

/**
 * The files a command's redirections write or read outside the lists. The question names them
 * ("Execute: echo hi > proof.txt"), so approving it must let the sandbox open them: without the
 * grant the command runs with the folder still read-only.
 */
export function redirectGrants(input: PolicyInput): Grant[] {
  const { shell, lists } = input;
  if (!runsCommand(input.call) || !shell?.ok) return [];
  // A relative target lands in whichever folder an earlier `cd` moved to.
  const bases = directoryBases(shell, input.cwd, input.home) ?? [input.cwd];
  const out: Grant[] = [];
  for (const redirect of shell.redirects) {
    const absolute = redirect.target.startsWith('/') || redirect.target.startsWith('~');
    const targets = absolute
      ? [absolutePath(redirect.target, input.cwd, input.home)]
      : bases.map((base) => absolutePath(redirect.target, base, input.home));
    for (const lexical of targets) {
      if (SAFE_SINKS.has(lexical)) continue;
      const canonical = input.canonical[lexical] ?? lexical;
      const covered = redirect.writes ? writable(lists, canonical) : readable(lists, canonical);
      if (!covered)
        out.push({ list: redirect.writes ? 'allowed_files_rw' : 'allowed_files_ro', value: canonical });
    }
  }
  return out;
}

function sameGrant(a: Grant, b: Grant): boolean {
  return a.list === b.list && a.value === b.value;
}

function unique(grants: readonly Grant[]): Grant[] {
  return grants.filter((grant, index) => grants.findIndex((other) => sameGrant(grant, other)) === index);
}

/**
 * The question a person is asked about an `ask`: its grants (the decision's suggestion, the files
 * its redirections name, and whatever else deciding again asks for), and whether those grants, as
 * allow-list entries, cover the call for good — only then is "always" offered.
 */
export function approvalRequest(input: PolicyInput, ask: AskDecision): ApprovalRequest {
  let grants = unique([...(ask.suggestion ? [ask.suggestion] : []), ...redirectGrants(input)]);
  let lasting = false;
  for (let round = 0; round < MAX_ROUNDS && grants.length > 0; round += 1) {
    const again = decide({ ...input, lists: withGrants(input.lists, grants) });
    if (again.kind === 'allow') {
      lasting = true;
      break;
    }
    const next = again.kind === 'ask' ? again.suggestion : undefined;
    if (!next || grants.some((grant) => sameGrant(grant, next))) break;
    grants = [...grants, next];
  }
  const scopes: ApprovalScope[] = lasting ? ['once', 'session', 'always'] : ['once', 'session'];
  return { ...ask, grants, scopes };
}

/**
 * A confirmer's answer in the one model. The older words: yes is once, no is a refusal, always is
 * always when the question offered it and once otherwise (nothing could be saved). A scope the
 * question did not offer narrows to the session.
 */
export function normaliseAnswer(
  answer: ApprovalAnswer | ConfirmAnswer,
  request: Pick<ApprovalRequest, 'scopes'>,
): ApprovalAnswer {
  if (answer === 'yes') return { kind: 'allow', scope: 'once' };
  if (answer === 'no') return { kind: 'deny' };
  if (answer === 'always') {
    return { kind: 'allow', scope: request.scopes.includes('always') ? 'always' : 'once' };
  }
  if (answer.kind === 'allow' && !request.scopes.includes(answer.scope))
    return { kind: 'allow', scope: 'session' };
  return answer;
}

/** What a call's sandbox plan gets from its grants: paths to read, paths to write, domains to reach. */
export function grantedAccess(grants: readonly Grant[] | undefined): {
  read: string[];
  write: string[];
  domains: string[];
} {
  const pick = (...lists: Grant['list'][]) =>
    (grants ?? []).filter((grant) => lists.includes(grant.list)).map((grant) => grant.value);
  return {
    read: pick('allowed_paths_ro', 'allowed_files_ro'),
    write: pick('allowed_paths_rw', 'allowed_files_rw'),
    domains: pick('allowed_domains'),
  };
}
