// Checkpoints from the command line: `rune diff [SESSION]` shows what a session's runs changed,
// `rune undo SESSION [--turn N]` goes back to before a turn (the last one by default) — files and
// the stored conversation — asking about each file someone else changed since (on a terminal), or
// as --on-conflict says; without either it changes nothing and lists the conflicts.
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { liveTurns, netChanges } from '../agent/checkpoints/history.ts';
import { messagesDigest } from '../agent/checkpoints/recorder.ts';
import type { Resolution, RestoreReport } from '../agent/checkpoints/restore.ts';
import { CheckpointStore, checkpointsDir } from '../agent/checkpoints/store.ts';
import {
  applyUndo,
  planUndoTo,
  readHistory,
  recoverUnfinished,
  type UndoPlan,
} from '../agent/checkpoints/undo.ts';
import { loadConfig } from '../config/load.ts';
import { RuneError } from '../core/errors.ts';
import { protectedPathsFor } from '../policy/gate.ts';
import { changeLines, changesDiff, shownPath, turnLines, visible } from './checkpoint-view.ts';
import { paint, type Style, styleFor } from './format.ts';
import { listSessions, writeSession } from './sessions.ts';

export const CONFLICT_CHOICES = ['keep', 'take', 'both'] as const;
export type ConflictChoice = (typeof CONFLICT_CHOICES)[number];

const RESOLUTION: Record<ConflictChoice, Resolution> = { keep: 'theirs', take: 'checkpoint', both: 'both' };

/** The session a checkpoint store belongs to: `last` (most recently used), an id, or its prefix. */
export function findStore(env: NodeJS.ProcessEnv, ref: string | undefined): string {
  let ids: { id: string; used: number }[] = [];
  try {
    ids = readdirSync(checkpointsDir(env)).map((id) => {
      let used = 0;
      try {
        used = statSync(join(checkpointsDir(env), id, 'journal')).mtimeMs;
      } catch {
        // A store being made.
      }
      return { id, used };
    });
  } catch {
    // Nothing stored.
  }
  ids = ids.filter((entry) => entry.used > 0).sort((a, b) => b.used - a.used);
  if (ref === undefined || ref === 'last') {
    const last = ids[0];
    if (!last)
      throw new RuneError('NOT_FOUND', `no session has checkpoints (${checkpointsDir(env)} is empty)`);
    return last.id;
  }
  const matches = ids.filter((entry) => entry.id === ref || entry.id.startsWith(ref));
  if (matches.length === 1) return matches[0]!.id;
  if (matches.length > 1 && !matches.some((m) => m.id === ref))
    throw new RuneError(
      'USAGE',
      `session id "${ref}" is ambiguous: ${matches.map((m) => m.id.slice(0, 12)).join(', ')}`,
    );
  if (matches.some((m) => m.id === ref)) return ref;
  throw new RuneError('NOT_FOUND', `session "${ref}" has no checkpoints; \`rune diff\` shows the last one's`);
}

function parseTurn(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new RuneError('USAGE', `--turn must be a turn number (1, 2, …), not ${value}`);
  return n;
}

/** `rune diff [SESSION] [--turn N] [--stat]`. */
export function diffCommand(
  ref: string | undefined,
  options: { turn?: string; stat?: boolean },
  env: NodeJS.ProcessEnv = process.env,
  write: (text: string) => void = (text) => process.stdout.write(text),
): number {
  const id = findStore(env, ref);
  const turn = parseTurn(options.turn);
  const store = CheckpointStore.read(env, id);
  try {
    const history = readHistory(store.records);
    const cwd = sessionCwd(store) ?? process.cwd();
    const style = styleFor(process.stdout, env);
    if (turn !== undefined && !liveTurns(history).some((t) => t.n === turn))
      throw new RuneError('NOT_FOUND', `session ${id.slice(0, 8)} has no turn ${turn} (or it was undone)`);
    const changes = netChanges(history, turn ?? 1, turn ?? Number.POSITIVE_INFINITY);
    write(`${paint(style, 'bold', `session ${id}`)}${turn ? ` turn ${turn}` : ''}\n`);
    if (options.stat)
      write(
        `${turnLines(liveTurns(history), style).join('\n')}\n${changeLines(changes, cwd, style).join('\n')}\n`,
      );
    else write(changesDiff(store, changes, cwd, style));
  } finally {
    void store.close();
  }
  return 0;
}

function sessionCwd(store: CheckpointStore): string | undefined {
  const first = store.records[0];
  return first?.t === 'session' ? first.cwd : undefined;
}

/** Asks about each conflict on the terminal; undefined when there is none to ask on. */
async function askEach(
  plan: UndoPlan,
  cwd: string,
  style: Style,
): Promise<Map<string, Resolution> | undefined> {
  if (!process.stdin.isTTY || !process.stderr.isTTY) return undefined;
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  const choices = new Map<string, Resolution>();
  try {
    for (const conflict of plan.conflicts) {
      const answer = await new Promise<string>((done) =>
        rl.question(
          `${paint(style, 'yellow', 'changed since the checkpoint:')} ${visible(shownPath(conflict.p, cwd))}\n  [k]eep yours, [t]ake the checkpoint, [b]oth (the checkpoint's copy beside yours)? `,
          done,
        ),
      );
      choices.set(
        conflict.p,
        /^\s*t/i.test(answer) ? 'checkpoint' : /^\s*b/i.test(answer) ? 'both' : 'theirs',
      );
    }
  } finally {
    rl.close();
  }
  return choices;
}

/** `rune undo SESSION [--turn N] [--on-conflict keep|take|both]`. */
export async function undoCommand(
  ref: string,
  options: { turn?: string; onConflict?: string; config?: string },
  env: NodeJS.ProcessEnv = process.env,
  write: (text: string) => void = (text) => process.stdout.write(text),
): Promise<number> {
  if (options.onConflict !== undefined && !CONFLICT_CHOICES.includes(options.onConflict as ConflictChoice))
    throw new RuneError('USAGE', `--on-conflict must be keep, take or both, not ${options.onConflict}`);
  const id = findStore(env, ref);
  const turn = parseTurn(options.turn);
  const { config } = loadConfig({ env, ...(options.config ? { file: resolve(options.config) } : {}) });
  const store = CheckpointStore.open(env, id, { create: false, limits: { room: () => true } });
  try {
    const cwd = sessionCwd(store) ?? process.cwd();
    const style = styleFor(process.stdout, env);
    const notes = recoverUnfinished(
      store,
      protectedPathsFor(config, cwd, env),
      config.checkpoints.max_file_mb,
    );
    for (const note of notes) process.stderr.write(`rune: ${note}\n`);
    const plan = planUndoTo(readHistory(store.records), turn);
    if (!plan)
      throw new RuneError(
        'NOT_FOUND',
        turn
          ? `session ${id.slice(0, 8)} has no turn ${turn} to undo`
          : `session ${id.slice(0, 8)} has no turn left to undo`,
      );
    let choices = new Map<string, Resolution>();
    if (plan.conflicts.length > 0) {
      if (options.onConflict) {
        for (const conflict of plan.conflicts)
          choices.set(conflict.p, RESOLUTION[options.onConflict as ConflictChoice]);
      } else {
        const asked = await askEach(plan, cwd, style);
        if (!asked)
          throw new RuneError(
            'USAGE',
            `nothing was undone: ${plan.conflicts.length} file(s) changed since the checkpoint; choose with --on-conflict keep|take|both`,
            {
              details: plan.conflicts.map((c) => `  ${visible(shownPath(c.p, cwd))}`),
            },
          );
        choices = asked;
      }
    }
    const report = applyUndo(store, plan, choices);
    write(undoSummary(plan, report, cwd, style));
    rewindConversation(env, id, plan);
    if (report.failed.length > 0)
      throw new RuneError('IO', `${report.failed.length} path(s) could not be put back`, {
        details: report.failed.map(visible),
      });
  } finally {
    await store.close();
  }
  return 0;
}

/** What an undo did, for the person. */
export function undoSummary(plan: UndoPlan, report: RestoreReport, cwd: string, style: Style): string {
  const lines = [
    `undid turn ${plan.turn.n}${visible(plan.turn.prompt ? ` (${plan.turn.prompt})` : '')} and everything after it`,
  ];
  lines.push(
    ...changeLines(
      report.applied.map((c) => ({ ...c, was: c.was, now: c.now })),
      cwd,
      style,
    ).map((line) => `  ${line}`),
  );
  if (report.applied.length === 0) lines.push('  no file needed changing');
  for (const path of report.kept)
    lines.push(`  ${paint(style, 'yellow', 'kept yours:')} ${visible(shownPath(path, cwd))}`);
  for (const path of report.beside)
    lines.push(`  ${paint(style, 'yellow', "the checkpoint's copy:")} ${visible(shownPath(path, cwd))}`);
  for (const line of report.failed) lines.push(`  ${paint(style, 'red', 'not put back:')} ${visible(line)}`);
  return `${lines.join('\n')}\n`;
}

/** The stored conversation goes back to before the turn, when it still starts as it did then. */
function rewindConversation(env: NodeJS.ProcessEnv, id: string, plan: UndoPlan): void {
  const stored = listSessions(env).find((s) => s.id === id);
  if (!stored) return;
  const { messages, digest } = plan.turn;
  if (stored.messages.length < messages || messagesDigest(stored.messages, messages) !== digest) {
    process.stderr.write(
      'rune: the stored conversation changed since that turn (compacted); it was left as it is\n',
    );
    return;
  }
  writeSession(env, {
    ...stored,
    messages: stored.messages.slice(0, messages),
    updatedAt: new Date().toISOString(),
  });
}
