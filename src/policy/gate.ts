// The gate the agent calls for every tool call: it does the I/O around the pure decision —
// canonicalising paths, parsing shell text, asking the person (or not, in pipe mode and Concourse),
// persisting "always" answers and writing the audit log. Anything unexpected becomes a deny.
import { readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { settingName } from '../config/load.ts';
import type { PolicyMode, RuneConfig } from '../config/schema.ts';
import type { Logger } from '../core/logger.ts';
import { absolutePath, canonicalise, configFile, homeDir, runeHome } from '../core/paths.ts';
import { approvalRequest, normaliseAnswer, withGrants } from './approval.ts';
import { appendAudit, argsDigest, auditFile, auditRecord } from './audit.ts';
import { callGlobs, callPaths, decide, type PolicyInput, runsCommand } from './decide.ts';
import { narrowLists, narrowMode } from './narrow.ts';
import { floorPaths, globToRegExp } from './paths.ts';
import { addAllowlistEntry } from './persist.ts';
import { effectiveLists, isResolvedFor, listsOf, readProjectPolicy } from './project.ts';
import type { ShellAnalysis } from './shell.ts';
import type {
  AskDecision,
  Confirmer,
  Grant,
  PolicyDecision,
  PolicyGate,
  ProtectedPaths,
  ToolCallForPolicy,
} from './types.ts';

export interface PolicyGateOptions {
  config: RuneConfig;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** A person can be asked (interactive session, notes admin); false in pipe mode and Concourse. */
  interactive: boolean;
  /** --yes: an `ask` becomes an allow when nobody can be asked. */
  yes: boolean;
  confirmer?: Confirmer;
  sessionId: string;
  logger: Logger;
  now?: () => Date;
}

/** Every entry of the glob's folder its last component could match (a superset of the shell's). */
function expandGlob(pattern: string): string[] {
  const folder = dirname(pattern);
  const matcher = globToRegExp(basename(pattern));
  try {
    return readdirSync(folder)
      .filter((name) => matcher.test(name))
      .map((name) => join(folder, name));
  } catch {
    // No such folder: the shell passes the word as it is, which the floor check already saw.
    return [];
  }
}

/** The floor in its lexical and canonical forms: a symlinked ~/.ssh is protected at both places. */
function floorBoth(home: string, runeDir: string): string[] {
  const lexical = floorPaths(home, runeDir);
  return [...new Set([...lexical, ...lexical.map(canonicalise)])];
}

/**
 * The protected paths for a config without a gate (test fakes of PolicyGate): the floor and the
 * configured denied_paths. A real gate's protectedPaths() also holds the project config's.
 */
export function protectedPathsFor(config: RuneConfig, cwd: string, env: NodeJS.ProcessEnv): ProtectedPaths {
  const home = homeDir(env);
  return {
    floor: floorBoth(home, runeHome(env)),
    denied: config.policy.denied_paths.map((entry) => canonicalise(absolutePath(entry, cwd, home))),
    unrestricted: config.policy.mode === 'unrestricted',
  };
}

export function createPolicyGate(options: PolicyGateOptions): PolicyGate {
  const { config, cwd, env, logger } = options;
  const now = options.now ?? (() => new Date());
  const home = homeDir(env);
  const runeDir = runeHome(env);
  const audit = auditFile(env);
  const project = isResolvedFor(config, cwd) ? undefined : readProjectPolicy(cwd, logger);
  const mode: PolicyMode = narrowMode(config.policy.mode, project?.mode);
  let lists = effectiveLists(config, cwd, home);
  if (project) {
    const narrowed = narrowLists(lists, listsOf(project, cwd, home));
    lists = narrowed.lists;
    if (narrowed.dropped.length > 0) {
      logger.warn('policy.project_widening_ignored', {
        message: `the project config ${join(cwd, '.rune', 'rune.toml')} can only narrow the policy; ignored: ${narrowed.dropped.join('; ')}`,
      });
    }
  }
  // Deny reasons say where to add an entry the way this run's user sets it (a Concourse source).
  const listName = (list: string): string => settingName(config, `policy.${list}`, `[policy] ${list}`);
  const floor = floorBoth(home, runeDir);

  async function analyse(call: ToolCallForPolicy): Promise<ShellAnalysis | undefined> {
    if (!runsCommand(call) || typeof call.args.cmd !== 'string') return undefined;
    try {
      // Loaded with the first command judged: web-tree-sitter is no cost to a run without one.
      const { parseShell } = await import('./shell-parser.ts');
      return await parseShell(call.args.cmd);
    } catch (error) {
      logger.warn('policy.parser_unavailable', {
        message: `shell parser unavailable: ${(error as Error).message}`,
      });
      return undefined;
    }
  }

  // Calls approved for the session whose grants cannot cover them for good ($( … ) in a command):
  // the exact call (its arguments' digest) with what it was granted.
  const sessionCalls = new Set<string>();
  // What session and always answers added to the lists, for the sandbox plans of later calls.
  const granted: Grant[] = [];

  async function resolveAsk(
    call: ToolCallForPolicy,
    input: PolicyInput,
    decision: AskDecision,
  ): Promise<PolicyDecision> {
    const request = approvalRequest(input, decision);
    const { grants } = request;
    if (sessionCalls.has(callKey(call))) return { kind: 'allow', rule: 'confirm.session', grants };
    if (options.interactive && options.confirmer) {
      const preview = await call
        .preview?.()
        .catch((error: Error) => `(the change cannot be shown: ${error.message})`);
      const answer = normaliseAnswer(
        await options.confirmer.confirm(call, preview ? { ...request, preview } : request),
        request,
      );
      if (answer.kind === 'deny') {
        const instead = answer.instead?.trim();
        return {
          kind: 'deny',
          reason: `the user declined: ${decision.reason}${instead ? `; instead, the user says: ${instead}` : ''}`,
          rule: 'confirm.no',
        };
      }
      if (answer.scope === 'once') return { kind: 'allow', rule: 'confirm.yes', grants };
      if (answer.scope === 'always') persistGrants(grants);
      lists = withGrants(lists, grants);
      granted.push(...grants);
      if (!request.scopes.includes('always')) sessionCalls.add(callKey(call));
      return {
        kind: 'allow',
        rule: answer.scope === 'always' ? 'confirm.always' : 'confirm.session',
        grants,
      };
    }
    if (options.yes) return { kind: 'allow', rule: 'flag.yes', grants };
    // A Concourse step has no --yes and nobody to ask: there the lists are the only way.
    const yes = settingName(config, 'yes', '');
    const hint = yes
      ? `run interactively, or pass ${yes}`
      : `allow it in ${settingName(config, 'policy', '[policy]')} instead`;
    return {
      kind: 'deny',
      reason: `${decision.reason}; it needs confirmation and nobody can be asked in this mode (${hint})`,
      rule: decision.rule,
    };
  }

  /** "Always": every grant goes into rune.toml (edited in place); a failure is reported, the call still runs. */
  function persistGrants(grants: readonly Grant[]): void {
    const file = configFile(env);
    for (const grant of grants) {
      try {
        addAllowlistEntry(file, grant.list, grant.value);
      } catch (error) {
        logger.warn('policy.persist_failed', {
          message: `could not add '${grant.value}' to ${grant.list} in ${file}: ${(error as Error).message}`,
        });
      }
    }
  }

  return {
    protectedPaths: () => ({ floor, denied: lists.denied, unrestricted: mode === 'unrestricted' }),
    granted: () => [...granted],
    async check(call) {
      let decision: PolicyDecision;
      try {
        const shell = mode === 'unrestricted' ? undefined : await analyse(call);
        const canonical: Record<string, string> = {};
        for (const path of callPaths(call, cwd, home, shell)) canonical[path] = canonicalise(path);
        const globs: Record<string, string[]> = {};
        for (const pattern of callGlobs(call, cwd, home, shell)) {
          globs[pattern] = expandGlob(pattern);
          for (const match of globs[pattern]) canonical[match] = canonicalise(match);
        }
        const input: PolicyInput = {
          call,
          mode,
          lists,
          floor,
          cwd,
          home,
          canonical,
          globs,
          listName,
          ...(shell ? { shell } : {}),
        };
        decision = decide(input);
        if (decision.kind === 'ask') decision = await resolveAsk(call, input, decision);
        // The file tools open the paths judged here (src/tools/target.ts); a command opens its own.
        if (decision.kind === 'allow' && !runsCommand(call) && Object.keys(canonical).length > 0)
          decision = { ...decision, paths: canonical };
      } catch (error) {
        decision = {
          kind: 'deny',
          reason: `policy error: ${(error as Error).message}`,
          rule: 'policy.error',
        };
      }
      try {
        appendAudit(audit, auditRecord(call, decision, { time: now(), session: options.sessionId, mode }));
      } catch (error) {
        logger.warn('policy.audit_failed', {
          message: `cannot write the audit log ${audit}: ${(error as Error).message}`,
        });
      }
      return decision;
    },
  };
}

/** The key of one exact call: tool, server and the digest of its arguments. */
function callKey(call: ToolCallForPolicy): string {
  return `${call.source}:${call.server ?? ''}:${call.tool}:${argsDigest(call.args)}`;
}
