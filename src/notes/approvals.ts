// Approvals: a policy question of a note's chat run, stored as a row an admin answers in the
// browser while the run waits. The row holds exactly what approving allows (the grants) and which
// answers it takes. An answer is stored (with "always", its allow-list entries written to rune.toml)
// before the waiting run hears it; a question nobody answers in time is a no.
import { randomBytes } from 'node:crypto';
import { configFile } from '../core/paths.ts';
import { redact } from '../core/redact.ts';
import { addAllowlistEntry } from '../policy/persist.ts';
import type { ApprovalAnswer, ApprovalScope, Confirmer, Grant } from '../policy/types.ts';
import type { Approval } from './api-types.ts';
import type { Store } from './db.ts';
import type { EventHub } from './events.ts';
import { ApiError } from './http.ts';

/** An approval as stored: suggestion, grants and scopes as JSON text. */
export type ApprovalRow = Omit<Approval, 'suggestion' | 'grants' | 'scopes'> & {
  suggestion: string | null;
  grants: string;
  scopes: string;
};

export function toApproval(row: ApprovalRow): Approval {
  return {
    ...row,
    suggestion: row.suggestion ? JSON.parse(row.suggestion) : null,
    grants: JSON.parse(row.grants),
    scopes: JSON.parse(row.scopes),
  };
}

/** How an admin answers: yes is once; session holds for the rest of the run; always goes to rune.toml. */
export type ApprovalWord = 'yes' | 'no' | 'session' | 'always';

/** The answer a run hears when nobody answered: it was cancelled, it ended, or time ran out. */
export const UNANSWERED: ApprovalAnswer = Object.freeze({ kind: 'deny' });
const SCOPE_OF: Record<Exclude<ApprovalWord, 'no'>, ApprovalScope> = {
  yes: 'once',
  session: 'session',
  always: 'always',
};

/** What of a running chat run its questions need. */
export interface AskingRun {
  noteId: number;
  runId: string;
  controller: AbortController;
  /** The run's unanswered questions: approval id → what lets the run go on. */
  waiting: Map<string, (answer: ApprovalAnswer) => void>;
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
              `insert into approvals(id, note_id, run_id, tool, arguments, question, reason, suggestion, grants, scopes, status, created_at)
             values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?)`,
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
              JSON.stringify(decision.grants),
              JSON.stringify(decision.scopes),
              store.stamp(),
            );
          hub.publish({
            name: 'approval.requested',
            noteId: run.noteId,
            adminsOnly: true,
            data: { note_id: run.noteId, approval: toApproval(this.approval(id)!) },
          });
        });
        return new Promise<ApprovalAnswer>((resolve) => {
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
   * Everything the answer promises is stored before it returns: with "always", every grant is in
   * rune.toml first (the policy gate then finds them there). `instead` goes to the model with a no.
   */
  answer(id: string, answer: ApprovalWord, by: string | null, instead?: string): ApprovalRow | null {
    const row = this.approval(id);
    if (row?.status !== 'pending') return null;
    if (answer !== 'no' && !(JSON.parse(row.scopes) as ApprovalScope[]).includes(SCOPE_OF[answer])) {
      throw new ApiError(
        'BAD_REQUEST',
        `answer: this call cannot be allowed ${answer === 'always' ? 'for good' : answer}; answer yes, session or no`,
      );
    }
    if (by !== null && answer === 'always') this.persist(JSON.parse(row.grants) as Grant[]);
    const { store } = this.o;
    const said = answer === 'no' && instead?.trim() ? redact(instead.trim()) : null;
    const updated = store.tx(() => {
      store.db
        .prepare(
          'update approvals set status = ?, answered_by = ?, answered_at = ?, instead = ? where id = ?',
        )
        .run(by === null ? 'expired' : answer, by, store.stamp(), said, id);
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
    const heard: ApprovalAnswer =
      by === null || answer === 'no'
        ? { kind: 'deny', ...(said ? { instead: said } : {}) }
        : { kind: 'allow', scope: SCOPE_OF[answer] };
    store.afterCommit(() => run?.waiting.get(id)?.(heard));
    return updated;
  }

  private persist(grants: readonly Grant[]): void {
    const file = configFile(this.o.env);
    for (const grant of grants) {
      try {
        addAllowlistEntry(file, grant.list, grant.value);
      } catch (error) {
        throw new ApiError(
          'INTERNAL',
          `could not add '${grant.value}' to ${grant.list} in ${file}: ${redact((error as Error).message)}; answer yes to allow this call once, or add it by hand`,
        );
      }
    }
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
