// Approvals: a policy question of a note's chat run, stored as a row an admin answers in the
// browser while the run waits. An answer is stored (with "always", its allow-list entry written to
// rune.toml) before the waiting run hears it; a question nobody answers in time is a no.
import { randomBytes } from 'node:crypto';
import { configFile } from '../core/paths.ts';
import { redact } from '../core/redact.ts';
import { addAllowlistEntry } from '../policy/persist.ts';
import type { ConfirmAnswer, Confirmer } from '../policy/types.ts';
import type { Approval } from './api-types.ts';
import type { Store } from './db.ts';
import type { EventHub } from './events.ts';
import { ApiError } from './http.ts';

/** An approval as stored: the suggestion as JSON text. */
export type ApprovalRow = Omit<Approval, 'suggestion'> & { suggestion: string | null };

export function toApproval(row: ApprovalRow): Approval {
  return { ...row, suggestion: row.suggestion ? JSON.parse(row.suggestion) : null };
}

/** What of a running chat run its questions need. */
export interface AskingRun {
  noteId: number;
  runId: string;
  controller: AbortController;
  /** The run's unanswered questions: approval id → what lets the run go on. */
  waiting: Map<string, (answer: ConfirmAnswer) => void>;
}

export interface ApprovalOptions {
  store: Store;
  hub: EventHub;
  env: NodeJS.ProcessEnv;
  /** How long a question waits for an answer before it is a no. */
  timeoutMs?: number;
  /** The run now going in a note, if any. */
  runOf: (noteId: number) => AskingRun | undefined;
}

export class Approvals {
  constructor(private readonly o: ApprovalOptions) {}

  /** The confirmer of one run: each question becomes a pending approval the run waits on. */
  confirmer(run: AskingRun): Confirmer {
    return {
      confirm: (call, decision) => {
        const { store, hub } = this.o;
        const id = `a_${randomBytes(9).toString('base64url')}`;
        store.tx(() => {
          store.db
            .prepare(
              `insert into approvals(id, note_id, run_id, tool, arguments, question, reason, suggestion, status, created_at)
             values (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?)`,
            )
            .run(
              id,
              run.noteId,
              run.runId,
              call.tool,
              redact(JSON.stringify(call.args)),
              // A preview (edit_file's diff) goes with the question: the admin approves the change itself.
              redact(decision.preview ? `${decision.question}\n${decision.preview}` : decision.question),
              redact(decision.reason),
              decision.suggestion ? JSON.stringify(decision.suggestion) : null,
              store.stamp(),
            );
          hub.publish({
            name: 'approval.requested',
            noteId: run.noteId,
            adminsOnly: true,
            data: { note_id: run.noteId, approval: toApproval(this.approval(id)!) },
          });
        });
        return new Promise<ConfirmAnswer>((resolve) => {
          const timer = setTimeout(() => this.answer(id, 'no', null), this.o.timeoutMs ?? 600_000);
          timer.unref();
          run.waiting.set(id, (answer) => {
            clearTimeout(timer);
            run.waiting.delete(id);
            resolve(answer);
          });
          if (run.controller.signal.aborted) this.answer(id, 'no', null);
        });
      },
    };
  }

  approval(id: string): ApprovalRow | undefined {
    return this.o.store.db.prepare('select * from approvals where id = ?').get(id) as ApprovalRow | undefined;
  }

  pending(noteId?: number): ApprovalRow[] {
    const sql = `select * from approvals where status = 'pending'${noteId === undefined ? '' : ' and note_id = ?'} order by created_at`;
    const stmt = this.o.store.db.prepare(sql);
    return (noteId === undefined ? stmt.all() : stmt.all(noteId)) as ApprovalRow[];
  }

  /**
   * Records an answer and lets the waiting run go on. Null when the approval is not pending.
   * Everything the answer promises is stored before it returns: with "always", the allow-list
   * entry is in rune.toml first (the policy gate then finds it there).
   */
  answer(id: string, answer: ConfirmAnswer, by: string | null): ApprovalRow | null {
    const row = this.approval(id);
    if (row?.status !== 'pending') return null;
    if (by !== null && answer === 'always' && row.suggestion) {
      const suggestion = JSON.parse(row.suggestion) as {
        list: Parameters<typeof addAllowlistEntry>[1];
        value: string;
      };
      const file = configFile(this.o.env);
      try {
        addAllowlistEntry(file, suggestion.list, suggestion.value);
      } catch (error) {
        throw new ApiError(
          500,
          'INTERNAL',
          `could not add '${suggestion.value}' to ${suggestion.list} in ${file}: ${redact((error as Error).message)}; answer yes to allow this call once, or add it by hand`,
        );
      }
    }
    const { store } = this.o;
    const updated = store.tx(() => {
      store.db
        .prepare('update approvals set status = ?, answered_by = ?, answered_at = ? where id = ?')
        .run(by === null ? 'expired' : answer, by, store.stamp(), id);
      const after = this.approval(id)!;
      this.o.hub.publish({
        name: 'approval.resolved',
        noteId: row.note_id,
        adminsOnly: true,
        data: { note_id: row.note_id, approval: toApproval(after) },
      });
      return after;
    });
    const run = this.o.runOf(row.note_id);
    store.afterCommit(() => run?.waiting.get(id)?.(by === null ? 'no' : answer));
    return updated;
  }

  /** Every question of a run that ended expires (the run stopped waiting). */
  expire(runId: string): void {
    for (const row of this.o.store.db
      .prepare("select id from approvals where run_id = ? and status = 'pending'")
      .all(runId) as Array<{ id: string }>) {
      this.answer(row.id, 'no', null);
    }
  }
}
