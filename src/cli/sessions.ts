// Stored conversations: one JSON file per session under $RUNE_HOME/sessions (private folder,
// secrets redacted), listed by `rune sessions` and continued with `--resume last|ID`.
import { readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentRunResult } from '../agent/types.ts';
import { RuneError } from '../core/errors.ts';
import { makeDir } from '../core/make-dir.ts';
import { runeHome } from '../core/paths.ts';
import { redactValue } from '../core/redact.ts';
import { terminalLine } from '../core/terminal-text.ts';
import { newUuid } from '../core/uuid.ts';
import type { ChatMessage, Usage } from '../providers/types.ts';

export interface StoredSession {
  version: 1;
  id: string;
  createdAt: string;
  updatedAt: string;
  cwd: string;
  model: string;
  /** The first prompt, shortened: what `rune sessions` shows. */
  title: string;
  status: string;
  runs: number;
  usage: Usage;
  messages: ChatMessage[];
}

export function sessionsDir(env: NodeJS.ProcessEnv): string {
  return join(runeHome(env), 'sessions');
}

const ID = /^[A-Za-z0-9-]{1,64}$/;

/**
 * Whether a run got at least one model answer beyond `history`. A run that failed before any answer
 * (no API key, provider down) is not stored: `--resume last` would pick an empty, failed session
 * over the last real conversation.
 */
export function answeredInRun(result: AgentRunResult, history: readonly ChatMessage[] = []): boolean {
  const answers = (messages: readonly ChatMessage[]) => messages.filter((m) => m.role === 'assistant').length;
  return answers(result.messages) > answers(history);
}

export function saveSession(
  env: NodeJS.ProcessEnv,
  result: AgentRunResult,
  details: { cwd: string; prompt: string; previous?: StoredSession },
): StoredSession {
  if (!ID.test(result.sessionId)) throw new RuneError('INTERNAL', `bad session id ${result.sessionId}`);
  const now = new Date().toISOString();
  const previous = details.previous;
  const session: StoredSession = {
    version: 1,
    id: result.sessionId,
    createdAt: previous?.createdAt ?? now,
    updatedAt: now,
    cwd: details.cwd,
    model: result.model,
    title: previous?.title ?? details.prompt.replace(/\s+/g, ' ').trim().slice(0, 80),
    status: result.status,
    runs: (previous?.runs ?? 0) + 1,
    usage: {
      inputTokens: (previous?.usage.inputTokens ?? 0) + result.usage.inputTokens,
      outputTokens: (previous?.usage.outputTokens ?? 0) + result.usage.outputTokens,
      totalTokens: (previous?.usage.totalTokens ?? 0) + result.usage.totalTokens,
    },
    messages: result.messages,
  };
  writeSession(env, session);
  return session;
}

/** Writes a session's file whole (a temporary file renamed over it), secrets redacted. */
export function writeSession(env: NodeJS.ProcessEnv, session: StoredSession): void {
  const dir = sessionsDir(env);
  try {
    makeDir(dir);
    const file = join(dir, `${session.id}.json`);
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(redactValue(session))}\n`, { mode: 0o600 });
    renameSync(tmp, file);
  } catch (error) {
    throw new RuneError('IO', `cannot store the session in ${dir}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

function readSession(file: string): StoredSession | undefined {
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as StoredSession;
    return value.version === 1 && Array.isArray(value.messages) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Every stored session, most recently updated first. Unreadable files are skipped. */
export function listSessions(env: NodeJS.ProcessEnv): StoredSession[] {
  const dir = sessionsDir(env);
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith('.json'));
  } catch {
    return [];
  }
  const sessions: { session: StoredSession; mtime: number }[] = [];
  for (const name of names) {
    const file = join(dir, name);
    const session = readSession(file);
    if (session) sessions.push({ session, mtime: statSync(file).mtimeMs });
  }
  return sessions
    .sort((a, b) => b.session.updatedAt.localeCompare(a.session.updatedAt) || b.mtime - a.mtime)
    .map((entry) => entry.session);
}

/** `last` (the newest of the folder `cwd`), a full id or a unique prefix of one. */
export function findSession(env: NodeJS.ProcessEnv, ref: string, cwd: string): StoredSession {
  const sessions = listSessions(env);
  if (ref === 'last') {
    const last = sessions.find((s) => s.cwd === cwd);
    if (!last) {
      const other = sessions[0];
      if (other) {
        throw new RuneError(
          'NOT_FOUND',
          `there is no stored session for ${cwd}; the last one is from ${other.cwd}: \`rune --resume ${other.id.slice(0, 8)}\` continues a copy of it here (\`rune sessions\` lists them all)`,
        );
      }
      let files = 0;
      try {
        files = readdirSync(sessionsDir(env)).filter((name) => name.endsWith('.json')).length;
      } catch {
        // No folder: nothing was ever stored.
      }
      throw new RuneError(
        'NOT_FOUND',
        files > 0
          ? `there is no stored session to resume: ${files} session file${files === 1 ? '' : 's'} in ${sessionsDir(env)} could not be read`
          : `there is no stored session to resume (${sessionsDir(env)} is empty)`,
      );
    }
    return last;
  }
  const exact = sessions.find((s) => s.id === ref);
  if (exact) return exact;
  const matches = sessions.filter((s) => s.id.startsWith(ref));
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) {
    throw new RuneError(
      'USAGE',
      `session id "${ref}" is ambiguous: ${matches.map((s) => s.id.slice(0, 12)).join(', ')}`,
    );
  }
  throw new RuneError(
    'NOT_FOUND',
    `no stored session "${ref}"; \`rune sessions\` lists them (to continue the last one with a prompt: rune --resume last "PROMPT")`,
  );
}

/** A copy of `stored` that belongs to `cwd`, under a new id: the original stays with its folder. */
export function copyForFolder(stored: StoredSession, cwd: string): StoredSession {
  return { ...stored, id: newUuid(), cwd, createdAt: new Date().toISOString() };
}

export function formatSessionList(sessions: readonly StoredSession[]): string {
  if (sessions.length === 0) return 'no stored sessions\n';
  const lines = sessions.map(
    (s) =>
      `${s.id.slice(0, 8)}  ${s.updatedAt.slice(0, 16).replace('T', ' ')}  ${s.status.padEnd(20)}  ${String(s.usage.totalTokens).padStart(7)} tok  ${terminalLine(s.title)}`,
  );
  return `${['id        updated           status                  tokens  first prompt', ...lines].join('\n')}\n`;
}

/** `rune sessions [--json]`. */
export function sessionsCommand(options: { json?: boolean }, env: NodeJS.ProcessEnv = process.env): number {
  const sessions = listSessions(env);
  if (options.json) {
    const rows = sessions.map(({ messages, ...rest }) => ({ ...rest, messages: messages.length }));
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
  } else {
    process.stdout.write(formatSessionList(sessions));
  }
  return 0;
}
