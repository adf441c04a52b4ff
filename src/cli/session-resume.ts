// Continuing a stored session from the interactive session: `rune --resume` and `/resume` open a
// picker (this folder's sessions first: time, first prompt, size), `/resume ID` takes one by id.
// A session of another folder is never moved here silently: the person is asked, and a copy
// continues here while the original stays with its folder.
import { homeDir } from '../core/paths.ts';
import { paint } from './format.ts';
import { newPolicy, type SessionContext } from './session-context.ts';
import { replayTranscript } from './session-replay.ts';
import { copyForFolder, findSession, listSessions, type StoredSession } from './sessions.ts';

/** Sessions shown in the picker at most. */
const PICKER_ROWS = 20;

function size(session: StoredSession): string {
  const count = session.messages.length;
  return `${count} message${count === 1 ? '' : 's'}, ${session.usage.totalTokens} tokens`;
}

function shortFolder(path: string, env: NodeJS.ProcessEnv): string {
  const home = homeDir(env);
  return path === home || path.startsWith(`${home}/`) ? `~${path.slice(home.length)}` : path;
}

/** This folder's sessions first, then the others, each newest first. */
export function pickerOrder(sessions: readonly StoredSession[], cwd: string): StoredSession[] {
  return [...sessions.filter((s) => s.cwd === cwd), ...sessions.filter((s) => s.cwd !== cwd)];
}

/** The picker; the session chosen, or undefined. */
export async function pickSession(session: SessionContext): Promise<StoredSession | undefined> {
  const { setup, terminal, style, write } = session;
  const all = pickerOrder(listSessions(setup.env), setup.cwd).filter((s) => s.id !== session.state.sessionId);
  if (all.length === 0) {
    write('no stored sessions to resume\n');
    return undefined;
  }
  const shown = all.slice(0, PICKER_ROWS);
  const index = await terminal.choose({
    title: [
      paint(style, 'bold', 'Resume which session?'),
      paint(style, 'dim', `(this folder's first; ${all.length} stored)`),
    ],
    choices: shown.map((s) => ({
      label: `${s.updatedAt.slice(0, 16).replace('T', ' ')}  ${s.title || '(no prompt)'}`,
      detail: `${size(s)}${s.cwd === setup.cwd ? '' : ` · in ${shortFolder(s.cwd, setup.env)}`}`,
    })),
    initial: 0,
  });
  return index === undefined ? undefined : shown[index];
}

/**
 * Makes `stored` the session's conversation: asked first when it belongs to another folder (then
 * a copy continues here), replayed on screen. False when the person cancelled.
 */
export async function resumeInto(session: SessionContext, stored: StoredSession): Promise<boolean> {
  const { setup, state, terminal, style, write } = session;
  let chosen = stored;
  if (stored.cwd !== setup.cwd) {
    write(`${paint(style, 'yellow', `That session belongs to ${stored.cwd}.`)}\n`);
    const index = await terminal.choose({
      title: [paint(style, 'bold', `Continue it in ${setup.cwd}?`)],
      choices: [
        {
          label: 'Yes, as a copy here',
          detail: `(the original stays with ${shortFolder(stored.cwd, setup.env)})`,
          key: 'y',
        },
        { label: 'No', key: 'n' },
      ],
      initial: 0,
    });
    if (index !== 0) {
      write('not resumed\n');
      return false;
    }
    chosen = copyForFolder(stored, setup.cwd);
  }
  state.messages = chosen.messages;
  state.sessionId = chosen.id;
  state.stored = chosen;
  state.grants = [];
  state.policy = await newPolicy(setup, state.config, session.logger, session.confirmer, state.sessionId);
  replayTranscript(session, chosen);
  return true;
}

/** `/resume [ID]`. */
export async function resumeCommand(session: SessionContext, arg: string): Promise<boolean> {
  let stored: StoredSession | undefined;
  if (arg) {
    try {
      stored = findSession(session.setup.env, arg, session.setup.cwd);
    } catch (error) {
      session.write(`${(error as Error).message}\n`);
      return true;
    }
  } else stored = await pickSession(session);
  if (stored) await resumeInto(session, stored);
  return true;
}
