// The AI chat of a note: runs the agent server-side with the notes tools (chat-tools.ts), streams
// its tokens and progress to everyone in the note, turns the policy's questions into approvals an
// admin answers in the browser (approvals.ts), and stores every message (full-text searchable).
// Each run is recorded while it runs (with the answer streamed so far), so one the process did not
// live to finish is shown as interrupted after a restart rather than lost or running forever.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { AgentEvent, AgentRunOptions, AgentRunResult } from '../agent/types.ts';
import { deriveConfig } from '../config/load.ts';
import type { RuneConfig } from '../config/schema.ts';
import { makeFolder, Root, removeTree } from '../core/fd/index.ts';
import type { Logger } from '../core/logger.ts';
import { realPath } from '../core/paths.ts';
import { redact } from '../core/redact.ts';
import { resolveRunPolicy } from '../policy/project.ts';
import type { ApprovalAnswer } from '../policy/types.ts';
import type { ChatMessage } from '../providers/types.ts';
import type { ChatMessage as ApiChatMessage } from './api-types.ts';
import { Approvals, UNANSWERED } from './approvals.ts';
import { clip, notesTools } from './chat-tools.ts';
import type { Collab } from './collab.ts';
import type { ChatRow, NoteRow, Store } from './db.ts';
import type { EventHub } from './events.ts';
import type { Principal } from './roles.ts';

export type RunAgent = (options: AgentRunOptions) => Promise<AgentRunResult>;

export function toMessage(row: ChatRow): ApiChatMessage {
  return { ...row, role: row.role as ApiChatMessage['role'] };
}

interface Run {
  runId: string;
  noteId: number;
  controller: AbortController;
  waiting: Map<string, (answer: ApprovalAnswer) => void>;
  done: Promise<void>;
  /** The text streamed since the last tool call: the answer so far. */
  partial: string;
  /** Writes `partial` to the run's record a little later (batched: tokens come fast). */
  partialTimer: NodeJS.Timeout | null;
  /** Set when the server stops the run (shutdown): why. */
  stopping: string | null;
}

/** chat.done status of a run the server did not finish (shutdown, crash). */
export const INTERRUPTED = 'Interrupted';
const PARTIAL_FLUSH_MS = 250;

export interface ChatOptions {
  store: Store;
  hub: EventHub;
  collab: Collab;
  config: RuneConfig;
  logger: Logger;
  runAgent: RunAgent | undefined;
  env: NodeJS.ProcessEnv;
  cwd: string;
  approvalTimeoutMs?: number;
}

const HISTORY_MESSAGES = 40;
const PROGRESS_CHARS = 2000;

export class ChatService {
  private readonly runs = new Map<number, Run>();
  private readonly o: ChatOptions;
  /** The questions of the runs, answered by admins (src/notes/approvals.ts). */
  readonly approvals: Approvals;

  constructor(options: ChatOptions) {
    this.o = options;
    this.approvals = new Approvals({
      store: options.store,
      hub: options.hub,
      env: options.env,
      ...(options.approvalTimeoutMs !== undefined ? { timeoutMs: options.approvalTimeoutMs } : {}),
      runOf: (noteId) => this.runs.get(noteId),
    });
  }

  running(noteId: number): string | null {
    return this.runs.get(noteId)?.runId ?? null;
  }

  private message(
    noteId: number,
    role: string,
    author: string | null,
    content: string,
    runId: string | null,
  ): ChatRow {
    return this.o.store.tx(() => {
      const row = this.o.store.addChat(noteId, role, author, redact(content), runId);
      this.o.hub.publish({
        name: 'chat.message',
        noteId,
        data: { note_id: noteId, message: toMessage(row) },
      });
      return row;
    });
  }

  /**
   * Starts a run; null when the note already has one. The message and the run's record are
   * committed before this returns.
   */
  start(note: NoteRow, principal: Principal, text: string): { runId: string; message: ChatRow } | null {
    if (this.runs.has(note.id)) return null;
    const runId = `r_${randomBytes(9).toString('base64url')}`;
    const history = this.history(note.id);
    const { store } = this.o;
    const message = store.tx(() => {
      store.db
        .prepare(
          "insert into chat_runs(id, note_id, started_by, status, started_at) values (?, ?, ?, 'running', ?)",
        )
        .run(runId, note.id, principal.name, store.stamp());
      return this.message(note.id, 'user', principal.name, text, runId);
    });
    const controller = new AbortController();
    const run: Run = {
      runId,
      noteId: note.id,
      controller,
      waiting: new Map(),
      done: Promise.resolve(),
      partial: '',
      partialTimer: null,
      stopping: null,
    };
    this.runs.set(note.id, run);
    run.done = this.execute(note, principal, text, history, run).finally(() => {
      this.runs.delete(note.id);
    });
    return { runId, message };
  }

  private history(noteId: number): ChatMessage[] {
    const rows = this.o.store.listChat(noteId, undefined, HISTORY_MESSAGES);
    const out: ChatMessage[] = [];
    for (const row of rows) {
      if (row.role === 'user')
        out.push({ role: 'user', content: `${row.author ?? 'someone'}: ${row.content}` });
      else if (row.role === 'assistant') out.push({ role: 'assistant', content: row.content });
    }
    return out;
  }

  private progress(run: Run, kind: string, data: Record<string, unknown>): void {
    this.o.hub.publish({
      name: 'chat.progress',
      noteId: run.noteId,
      data: { note_id: run.noteId, run_id: run.runId, kind, ...data },
    });
  }

  private onEvent(run: Run, event: AgentEvent): void {
    const { hub } = this.o;
    switch (event.type) {
      case 'text':
        run.partial += event.delta;
        if (!run.partialTimer) {
          run.partialTimer = setTimeout(() => this.savePartial(run), PARTIAL_FLUSH_MS);
          run.partialTimer.unref();
        }
        hub.publish({
          name: 'chat.token',
          noteId: run.noteId,
          live: true,
          data: { note_id: run.noteId, run_id: run.runId, delta: event.delta },
        });
        break;
      case 'tool_call':
        // What was streamed before a tool call was not the answer.
        if (run.partial) {
          run.partial = '';
          this.savePartial(run);
        }
        this.progress(run, 'tool_call', {
          id: event.id,
          name: event.name,
          detail: clip(redact(event.arguments), PROGRESS_CHARS),
        });
        break;
      case 'policy_decision':
        this.progress(run, 'policy_decision', {
          id: event.id,
          name: event.name,
          detail: `${event.decision.kind} (${event.decision.rule})${'reason' in event.decision ? `: ${event.decision.reason}` : ''}`,
        });
        break;
      case 'tool_result':
        this.progress(run, 'tool_result', {
          id: event.id,
          name: event.name,
          is_error: event.isError,
          detail: clip(redact(event.content), PROGRESS_CHARS),
        });
        this.o.store.addChat(
          run.noteId,
          'tool',
          event.name,
          clip(redact(event.content), 4 * PROGRESS_CHARS),
          run.runId,
        );
        break;
      default:
        break;
    }
  }

  private async execute(
    note: NoteRow,
    principal: Principal,
    text: string,
    history: ChatMessage[],
    run: Run,
  ): Promise<void> {
    const { config, logger, runAgent } = this.o;
    let status = 'Error';
    let answer = '';
    let error: { code: string; message: string } | undefined;
    let closeMcp: (() => Promise<void>) | undefined;
    try {
      if (!runAgent) throw new Error('the agent is not available in this build');
      const cwd = this.workspace(note.id);
      // The run's policy, resolved for this note's workspace: a .rune/rune.toml there narrows the
      // gate, the sandbox and the MCP servers of this run exactly as it does in the CLI.
      const model = note.model ?? config.notes.model ?? config.model;
      const runConfig = resolveRunPolicy(
        model ? deriveConfig(config, { model }) : config,
        cwd,
        this.o.env,
        logger,
      );
      const extraTools = notesTools(this.o, note.id, principal);
      // The [[mcp]] servers of rune.toml, started for this run: a crashed one comes back next time.
      // The server never logs in; it uses what `rune mcp login` stored in the same RUNE_HOME.
      const mcp =
        config.mcp.length > 0
          ? await (await import('../mcp/run-servers.ts')).mcpForOneRun({
              config: runConfig,
              extraTools,
              logger,
              cwd,
              env: this.o.env,
              loginHint: (name) =>
                `the notes server cannot log in: run \`rune mcp login ${name}\` as the user running \`rune notes\` (same RUNE_HOME)`,
            })
          : undefined;
      closeMcp = mcp?.close;
      const missing = this.missingTools(run, mcp?.startFailures ?? []);
      const result = await runAgent({
        prompt: text,
        config: runConfig,
        cwd,
        env: this.o.env,
        logger,
        history,
        appendSystemPrompt: `You are the assistant of the note "${note.name}" in a shared Markdown notebook. The person writing is ${principal.name}. Use the notes tools to read and change its Markdown files; the working directory is this note's scratch folder for other files and commands.`,
        ...(mcp
          ? {
              tools: mcp.tools,
              executor: mcp.executor,
              takeNotices: () => [...missing.splice(0), ...mcp.takeNotices()],
            }
          : { extraTools }),
        ...(runConfig.policy.mode === 'confirm' ? { confirmer: this.approvals.confirmer(run) } : {}),
        signal: run.controller.signal,
        onEvent: (event) => this.onEvent(run, event),
        sessionId: run.runId,
      });
      status = result.status;
      error = result.error;
      answer = result.answer;
    } catch (thrown) {
      // A required MCP server that could not start says why in its details.
      const details = (thrown as { details?: readonly string[] }).details ?? [];
      error = { code: 'INTERNAL', message: redact([(thrown as Error).message, ...details].join('; ')) };
      logger.error('notes.chat_failed', { message: `chat run failed: ${error.message}` });
    }
    await closeMcp?.().catch(() => {});
    if (run.partialTimer) clearTimeout(run.partialTimer);
    run.partialTimer = null;
    for (const resolve of run.waiting.values()) resolve(UNANSWERED);
    try {
      this.end(run, { status, answer, error });
    } catch (thrown) {
      // The record stays 'running': the next start shows the run as interrupted.
      logger.error('notes.chat_failed', {
        message: `could not store the end of chat run ${run.runId}: ${redact((thrown as Error).message)}`,
      });
    }
  }

  /**
   * Servers that could not start (most often: a login is needed that the notes server cannot make):
   * everyone in the note is told in the chat, and the model with its first request, so neither
   * takes the missing tools for an oversight. Returns the model's notices.
   */
  private missingTools(run: Run, failures: readonly string[]): string[] {
    for (const failure of failures) {
      this.message(
        run.noteId,
        'system',
        null,
        `${failure}. Its tools are not available in this run.`,
        run.runId,
      );
    }
    return failures.map(
      (failure) => `${failure}. Its tools are not available in this run; do not look for them.`,
    );
  }

  /** Stores how a run ended, in one transaction: its last messages, its record, its approvals. */
  private end(
    run: Run,
    outcome: { status: string; answer: string; error: { code: string; message: string } | undefined },
  ): void {
    let { status, error } = outcome;
    const { store } = this.o;
    store.tx(() => {
      // A run that stopped early keeps what it had said so far.
      const answer = outcome.answer || (status === 'FinalAnswer' ? '' : run.partial);
      if (answer) this.message(run.noteId, 'assistant', 'rune', answer, run.runId);
      if (run.stopping) {
        status = INTERRUPTED;
        error = { code: 'INTERRUPTED', message: run.stopping };
        this.message(run.noteId, 'system', null, `The run was interrupted: ${run.stopping}.`, run.runId);
      } else if (error && status !== 'UserInterrupt') {
        this.message(run.noteId, 'system', null, `The run stopped: ${error.message}`, run.runId);
      }
      store.db
        .prepare("update chat_runs set status = ?, partial = '', ended_at = ? where id = ?")
        .run(status, store.stamp(), run.runId);
      this.approvals.expire(run.runId);
      this.o.hub.publish({
        name: 'chat.done',
        noteId: run.noteId,
        data: { note_id: run.noteId, run_id: run.runId, status, ...(error ? { error } : {}) },
      });
    });
  }

  private savePartial(run: Run): void {
    if (run.partialTimer) clearTimeout(run.partialTimer);
    run.partialTimer = null;
    try {
      this.o.store.db
        .prepare("update chat_runs set partial = ? where id = ? and status = 'running'")
        .run(redact(run.partial), run.runId);
    } catch (error) {
      this.o.logger.warn('notes.chat_partial', {
        message: `could not store the answer so far of run ${run.runId}: ${(error as Error).message}`,
      });
    }
  }

  /**
   * At start: runs recorded as running belonged to a process that died. Each is shown as
   * interrupted, with the answer it had streamed so far; its pending approvals expire. Returns how many.
   */
  recoverInterrupted(): number {
    const { store } = this.o;
    const rows = store.db
      .prepare("select id, note_id, partial from chat_runs where status = 'running' order by started_at")
      .all() as Array<{ id: string; note_id: number; partial: string }>;
    const why = 'rune notes stopped before it finished (the process ended unexpectedly)';
    for (const row of rows) {
      store.tx(() => {
        if (row.partial) this.message(row.note_id, 'assistant', 'rune', row.partial, row.id);
        this.message(row.note_id, 'system', null, `The run was interrupted: ${why}.`, row.id);
        store.db
          .prepare("update chat_runs set status = ?, partial = '', ended_at = ? where id = ?")
          .run(INTERRUPTED, store.stamp(), row.id);
        this.approvals.expire(row.id);
        this.o.hub.publish({
          name: 'chat.done',
          noteId: row.note_id,
          data: {
            note_id: row.note_id,
            run_id: row.id,
            status: INTERRUPTED,
            error: { code: 'INTERRUPTED', message: why },
          },
        });
      });
    }
    return rows.length;
  }

  /**
   * The note's own scratch folder: each note's chat works apart, so one note's files are outside
   * another note's working directory (and so outside what its policy allows without asking).
   */
  workspace(noteId: number): string {
    const name = `note-${noteId}`;
    // By descriptor (src/core/fd): a link planted in its place is refused, never followed.
    const base = Root.open(realPath(this.o.cwd));
    try {
      makeFolder(base, name, { mode: 0o700 });
    } finally {
      base.close();
    }
    return join(this.o.cwd, name);
  }

  /** Removes a purged note's scratch folder, following no link and crossing no mount. */
  removeWorkspace(noteId: number): void {
    const base = Root.open(realPath(this.o.cwd));
    try {
      const left = removeTree(base, `note-${noteId}`);
      if (left.length > 0)
        this.o.logger.warn('notes.workspace_left', {
          message: `the scratch folder of note ${noteId} was not removed entirely: ${left.join('; ')}`,
        });
    } finally {
      base.close();
    }
  }

  cancel(noteId: number): boolean {
    const run = this.runs.get(noteId);
    if (!run) return false;
    run.controller.abort();
    for (const resolve of run.waiting.values()) resolve(UNANSWERED);
    return true;
  }

  /** Waits until every run has ended (shutdown); runs are stopped first and shown as interrupted. */
  async stopAll(): Promise<void> {
    const pending = [...this.runs.values()];
    for (const run of pending) {
      run.stopping = 'rune notes was shut down before it finished';
      this.cancel(run.noteId);
    }
    await Promise.allSettled(pending.map((run) => run.done));
  }
}
