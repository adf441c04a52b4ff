// The session's checkpoint commands: /changes (every file change of the session, commands' too, or
// of one turn, as coloured unified diffs; /diff is the last turn's file tool diffs), /undo (the last turn: its file changes and the conversation) and /rewind
// (the turns listed, a preview of going back to before one, then the same undo). A file someone
// else changed since is never overwritten without asking: keep yours, take the checkpoint, or both.

import { liveTurns, netChanges, readHistory } from '../agent/checkpoints/history.ts';
import { messagesDigest } from '../agent/checkpoints/recorder.ts';
import type { Resolution } from '../agent/checkpoints/restore.ts';
import { applyUndo, planUndoTo, type UndoPlan } from '../agent/checkpoints/undo.ts';
import type { ChatMessage } from '../providers/types.ts';
import { changeLines, changesDiff, shownPath, turnLines, visible } from './checkpoint-view.ts';
import { undoSummary } from './checkpoints.ts';
import { paint } from './format.ts';
import type { SessionContext } from './session-context.ts';
import { writeSession } from './sessions.ts';

type Handler = (session: SessionContext, arg: string) => boolean | Promise<boolean>;

export const CHECKPOINT_COMMANDS: Record<string, string> = {
  '/changes [N]': "every file change of this session, commands' too (or turn N's), as diffs",
  '/undo': 'undo the last turn: its file changes and the conversation',
  '/rewind [N]': 'list the turns; go back to before turn N, after a preview',
};

function recorderOf(session: SessionContext) {
  const recorder = session.state.checkpoints?.recorder;
  if (!recorder) {
    session.write(
      session.state.checkpoints
        ? 'no checkpoints yet: nothing in this session has changed a file\n'
        : 'checkpoints are off (checkpoints.enabled in rune.toml)\n',
    );
  }
  return recorder;
}

function changes(session: SessionContext, arg: string): boolean {
  const recorder = recorderOf(session);
  if (!recorder) return true;
  const history = readHistory(recorder.store.records);
  const turn = arg ? Number(arg) : undefined;
  if (turn !== undefined && !liveTurns(history).some((t) => t.n === turn)) {
    session.write(`there is no turn ${visible(arg)}; /rewind lists them\n`);
    return true;
  }
  const changes = netChanges(history, turn ?? 1, turn ?? Number.POSITIVE_INFINITY);
  session.write(changesDiff(recorder.store, changes, session.setup.cwd, session.style));
  return true;
}

/** A line the person types after `question`; Esc or Ctrl-C answers nothing (the safe default). */
async function ask(session: SessionContext, question: string): Promise<string> {
  return (await session.terminal.askText(question)) ?? '';
}

/** The person's answer to each conflict of the plan. */
async function resolveConflicts(session: SessionContext, plan: UndoPlan): Promise<Map<string, Resolution>> {
  const choices = new Map<string, Resolution>();
  const { style, setup } = session;
  for (const conflict of plan.conflicts) {
    const shown = visible(shownPath(conflict.p, setup.cwd));
    session.write(`${paint(style, 'yellow', '!')} ${shown} was changed since the checkpoint (not by rune)\n`);
    const answer = await ask(
      session,
      `  [k]eep yours, [t]ake the checkpoint, [b]oth (the checkpoint's copy as ${shown}.rune-undo)? `,
    );
    choices.set(conflict.p, /^\s*t/i.test(answer) ? 'checkpoint' : /^\s*b/i.test(answer) ? 'both' : 'theirs');
  }
  return choices;
}

/** The conversation as it was before the plan's turn, when it can be known. */
function conversationBefore(session: SessionContext, plan: UndoPlan): ChatMessage[] | undefined {
  const kept = session.state.checkpoints?.turnStarts.get(plan.turn.n);
  if (kept) return kept;
  const { messages } = session.state;
  const { messages: count, digest } = plan.turn;
  return messages.length >= count && messagesDigest(messages, count) === digest
    ? messages.slice(0, count)
    : undefined;
}

/** Undoes back to before turn `n`, planned again now (a preview may be a while old). */
async function undoTurn(session: SessionContext, n: number): Promise<void> {
  const recorder = session.state.checkpoints!.recorder!;
  const plan = planUndoTo(readHistory(recorder.store.records), n);
  if (!plan) {
    session.write('nothing to undo\n');
    return;
  }
  const choices = await resolveConflicts(session, plan);
  const report = applyUndo(recorder.store, plan, choices);
  session.write(undoSummary(plan, report, session.setup.cwd, session.style));
  const { state, setup } = session;
  const before = conversationBefore(session, plan);
  if (!before) {
    session.write('the conversation was compacted since that turn: it stays as it is\n');
    return;
  }
  state.messages = before;
  for (const n of [...(state.checkpoints?.turnStarts.keys() ?? [])])
    if (n >= plan.turn.n) state.checkpoints?.turnStarts.delete(n);
  if (state.stored) {
    state.stored = { ...state.stored, messages: before, updatedAt: new Date().toISOString() };
    try {
      writeSession(setup.env, state.stored);
    } catch (error) {
      session.logger.warn('cli.session_not_saved', { message: (error as Error).message });
    }
  }
  session.write(`the conversation is back to before "${visible(plan.turn.prompt)}"\n`);
}

async function undo(session: SessionContext): Promise<boolean> {
  const recorder = recorderOf(session);
  if (!recorder) return true;
  const last = liveTurns(readHistory(recorder.store.records)).at(-1);
  if (!last) session.write('nothing to undo\n');
  else await undoTurn(session, last.n);
  return true;
}

async function rewind(session: SessionContext, arg: string): Promise<boolean> {
  const recorder = recorderOf(session);
  if (!recorder) return true;
  const { style, setup, write } = session;
  const turns = liveTurns(readHistory(recorder.store.records));
  if (turns.length === 0) {
    write('nothing to rewind\n');
    return true;
  }
  let choice = arg;
  if (!choice) {
    write(`${turnLines(turns, style).join('\n')}\n`);
    choice = (await ask(session, 'go back to before which turn? (its number; Enter cancels) ')).trim();
    if (!choice) return true;
  }
  const plan = planUndoTo(readHistory(recorder.store.records), Number(choice));
  if (!plan) {
    write(`there is no turn ${visible(choice)} to go back to\n`);
    return true;
  }
  const preview = plan.steps.map((step) => ({
    p: step.p,
    r: step.r,
    was: plan.current.get(step.p) ?? null,
    now: step.want,
  }));
  const conflicted = new Set(plan.conflicts.map((c) => c.p));
  write(`going back to before turn ${plan.turn.n} ("${visible(plan.turn.prompt)}") would change:\n`);
  const lines = changeLines(preview, setup.cwd, style);
  write(
    `${lines.map((line, i) => `  ${line}${conflicted.has(preview[i]!.p) ? paint(style, 'yellow', '  (changed since by someone else: you will be asked)') : ''}`).join('\n') || '  no file'}\n`,
  );
  const answer = await ask(session, 'rewind? [y/N] ');
  if (!/^\s*y/i.test(answer)) {
    write('nothing changed\n');
    return true;
  }
  await undoTurn(session, plan.turn.n);
  return true;
}

export const CHECKPOINT_HANDLERS: Record<string, Handler> = {
  '/changes': changes,
  '/undo': undo,
  '/rewind': rewind,
};
