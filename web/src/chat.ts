// A note's chat with the agent: history, streamed tokens and progress of the running agent (the
// same for everyone in the note), and for admins the tool approvals the agent is waiting for.
import { type Approval, type ChatMessage, call, type Note, rank } from './api.ts';
import { clear, h } from './dom.ts';
import { markdownFragment } from './render.ts';
import type { Session } from './shell.ts';
import { toast } from './toast.ts';

export class ChatPane {
  readonly element: HTMLElement;
  private log = h('ol', { class: 'chat-log', 'aria-live': 'polite' });
  private approvals = h('div', { class: 'approvals' });
  private input = h('textarea', {
    class: 'chat-input',
    rows: 2,
    placeholder: 'Ask the agent about this note…',
    'aria-label': 'Chat message',
  });
  private sendButton = h('button', { type: 'submit', class: 'primary' }, 'Send');
  private cancelButton = h('button', { type: 'button', class: 'danger', hidden: true }, 'Stop');
  private status = h('span', { class: 'chat-status muted' });
  private running: string | null = null;
  /** run id → the bubble its tokens stream into, and the text so far. */
  private streams = new Map<
    string,
    { bubble: HTMLElement; body: HTMLElement; text: string; frame: number }
  >();
  private seen = new Set<number>();
  /** Approvals whose outcome is in the log already. */
  private resolved = new Set<string>();

  constructor(
    private note: Note,
    private readonly session: Session,
  ) {
    const canChat = rank[session.role] >= rank.user;
    this.cancelButton.addEventListener('click', () => void this.cancel());
    this.input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        void this.send();
      }
    });
    this.element = h(
      'section',
      { class: 'chat', 'aria-label': 'Chat' },
      h('header', { class: 'pane-head' }, h('h2', {}, 'Chat'), this.status, this.modelControl()),
      this.log,
      this.approvals,
      canChat
        ? h(
            'form',
            {
              class: 'chat-form',
              onsubmit: (event: Event) => {
                event.preventDefault();
                void this.send();
              },
            },
            this.input,
            h('div', { class: 'chat-buttons' }, this.sendButton, this.cancelButton),
          )
        : h('p', { class: 'muted' }, 'Read-only: log in as a user to chat.'),
    );
  }

  setNote(note: Note): void {
    this.note = note;
  }

  private modelControl(): HTMLElement | null {
    if (this.session.role !== 'admin') return null;
    const input = h('input', {
      class: 'model-input',
      placeholder: 'default model',
      value: this.note.model ?? '',
      'aria-label': 'Model for this note',
      title: 'Model for this note (empty: the configured default)',
    });
    input.addEventListener('change', async () => {
      try {
        const note = await call(
          'PATCH /api/notes/:note',
          { note: this.note.id },
          {
            model: input.value.trim() || null,
          },
        );
        this.note = note;
        toast(`Model: ${note.model ?? 'default'}`, 'info');
      } catch (error) {
        toast(error);
      }
    });
    return input;
  }

  async load(): Promise<void> {
    const _base = `/api/notes/${this.note.id}`;
    const { messages, running } = await call(
      'GET /api/notes/:note/chat',
      { note: this.note.id },
      undefined,
      '?limit=100',
    );
    this.seen.clear();
    this.resolved.clear();
    this.streams.clear();
    clear(this.log);
    for (const message of messages) this.addMessage(message);
    this.setRunning(running);
    if (this.session.role === 'admin') {
      const { approvals } = await call('GET /api/approvals', {}, undefined, `?note=${this.note.id}`);
      clear(this.approvals);
      for (const approval of approvals) this.showApproval(approval);
    }
    this.scroll();
  }

  /** Events of this note's stream that concern the chat. */
  handle(name: string, data: Record<string, unknown>): void {
    switch (name) {
      case 'chat.message':
        this.addMessage(data['message'] as ChatMessage);
        break;
      case 'chat.token':
        this.token(String(data['run_id']), String(data['delta'] ?? ''));
        break;
      case 'chat.progress':
        this.progress(data);
        break;
      case 'chat.done':
        this.done(data);
        break;
      case 'approval.requested':
        this.showApproval(data['approval'] as Approval);
        break;
      case 'approval.resolved':
        this.resolveApproval(data['approval'] as Approval);
        break;
    }
  }

  private setRunning(runId: string | null): void {
    this.running = runId;
    this.cancelButton.hidden = runId === null;
    this.sendButton.disabled = runId !== null;
    this.status.textContent = runId ? 'the agent is working…' : '';
  }

  private async send(): Promise<void> {
    const message = this.input.value.trim();
    if (!message || this.running) return;
    this.sendButton.disabled = true;
    try {
      const result = await call('POST /api/notes/:note/chat', { note: this.note.id }, { message });
      this.input.value = '';
      this.addMessage(result.message);
      this.setRunning(result.run_id);
    } catch (error) {
      this.sendButton.disabled = false;
      toast(error);
    }
  }

  private async cancel(): Promise<void> {
    try {
      await call('POST /api/notes/:note/chat/cancel', { note: this.note.id });
    } catch (error) {
      toast(error);
    }
  }

  private addMessage(message: ChatMessage): void {
    if (!message || this.seen.has(message.id)) return;
    this.seen.add(message.id);
    // The final assistant message replaces the bubble its tokens were streamed into.
    const stream =
      message.role === 'assistant' && message.run_id ? this.streams.get(message.run_id) : undefined;
    const item = this.messageItem(message);
    if (stream) {
      cancelAnimationFrame(stream.frame);
      stream.bubble.replaceWith(item);
      this.streams.delete(message.run_id!);
    } else {
      this.log.append(item);
    }
    this.scroll();
  }

  private messageItem(message: ChatMessage): HTMLElement {
    const who =
      message.role === 'user'
        ? (message.author ?? 'someone')
        : message.role === 'assistant'
          ? 'agent'
          : message.role;
    if (message.role === 'tool') {
      return h(
        'li',
        { class: 'msg tool', 'data-id': message.id },
        h(
          'details',
          {},
          h('summary', {}, 'tool result'),
          h('pre', { class: 'tool-output' }, message.content),
        ),
      );
    }
    const body = h('div', { class: 'msg-body markdown' });
    body.append(markdownFragment(message.content));
    return h(
      'li',
      { class: `msg ${message.role}`, 'data-id': message.id },
      h(
        'div',
        { class: 'msg-meta' },
        h('strong', {}, who),
        ' ',
        h('time', { datetime: message.created_at }, timeOf(message.created_at)),
      ),
      body,
    );
  }

  private token(runId: string, delta: string): void {
    let stream = this.streams.get(runId);
    if (!stream) {
      const body = h('div', { class: 'msg-body markdown' });
      const bubble = h(
        'li',
        { class: 'msg assistant streaming' },
        h(
          'div',
          { class: 'msg-meta' },
          h('strong', {}, 'agent'),
          ' ',
          h('span', { class: 'muted' }, 'typing…'),
        ),
        body,
      );
      this.log.append(bubble);
      stream = { bubble, body, text: '', frame: 0 };
      this.streams.set(runId, stream);
      if (!this.running) this.setRunning(runId);
    }
    stream.text += delta;
    // Re-render at most once per frame: tokens can arrive far faster than the screen refreshes.
    if (!stream.frame) {
      const current = stream;
      current.frame = requestAnimationFrame(() => {
        current.frame = 0;
        current.body.replaceChildren(markdownFragment(current.text));
        this.scroll();
      });
    }
  }

  private progress(data: Record<string, unknown>): void {
    const kind = String(data['kind'] ?? '');
    const label = kind === 'tool_call' ? '⚙ calls' : kind === 'policy_decision' ? '⛨ policy' : '↳ result';
    this.log.append(
      h(
        'li',
        { class: `msg progress ${kind}` },
        h('span', { class: 'progress-kind' }, label),
        ' ',
        h('code', {}, String(data['name'] ?? '')),
        data['detail']
          ? h('span', { class: 'progress-detail' }, ' ', String(data['detail']).slice(0, 400))
          : null,
      ),
    );
    this.scroll();
  }

  private done(data: Record<string, unknown>): void {
    const runId = String(data['run_id'] ?? '');
    const stream = this.streams.get(runId);
    if (stream) {
      stream.bubble.classList.remove('streaming');
      stream.bubble.querySelector('.msg-meta .muted')?.remove();
    }
    const error = data['error'] as { code: string; message: string } | undefined;
    const status = String(data['status'] ?? '');
    if (error || (status && status !== 'FinalAnswer')) {
      this.log.append(
        h(
          'li',
          { class: `msg done ${error ? 'error' : ''}` },
          `Run ended: ${status}${error ? ` — ${error.message}` : ''}`,
        ),
      );
    }
    this.setRunning(null);
    this.scroll();
  }

  private showApproval(approval: Approval): void {
    if (approval?.status !== 'pending' || this.session.role !== 'admin') return;
    if (this.approvals.querySelector(`[data-approval="${CSS.escape(approval.id)}"]`)) return;
    const answer = async (value: 'yes' | 'no' | 'session' | 'always') => {
      try {
        const result = await call('POST /api/approvals/:id', { id: approval.id }, { answer: value });
        this.resolveApproval(result);
      } catch (error) {
        toast(error);
      }
    };
    let args = approval.arguments;
    try {
      args = JSON.stringify(JSON.parse(args), null, 2);
    } catch {}
    this.approvals.append(
      h(
        'div',
        {
          class: 'card approval',
          'data-approval': approval.id,
          role: 'alertdialog',
          'aria-label': 'Tool approval',
        },
        h('p', { class: 'approval-question' }, h('strong', {}, 'The agent asks: '), approval.question),
        h(
          'p',
          { class: 'muted' },
          'Tool ',
          h('code', {}, approval.tool),
          approval.reason ? ` — ${approval.reason}` : '',
        ),
        h('pre', { class: 'approval-args' }, args),
        approval.grants.length > 0
          ? h(
              'p',
              { class: 'approval-grants muted' },
              'Approving allows: ',
              approval.grants.map(describeGrant).join(', '),
            )
          : null,
        h(
          'div',
          { class: 'approval-buttons' },
          h(
            'button',
            { type: 'button', class: 'primary', onclick: () => void answer('yes') },
            'Approve once',
          ),
          h('button', { type: 'button', onclick: () => void answer('session') }, 'Approve for this run'),
          approval.scopes.includes('always')
            ? h(
                'button',
                {
                  type: 'button',
                  onclick: () => void answer('always'),
                  title: `Add ${approval.grants.map((g) => `${g.value} to ${g.list}`).join(' and ')} in rune.toml`,
                },
                'Always allow',
              )
            : null,
          h('button', { type: 'button', class: 'danger', onclick: () => void answer('no') }, 'Deny'),
        ),
      ),
    );
    this.scroll();
  }

  private resolveApproval(approval: Approval): void {
    if (!approval) return;
    this.approvals.querySelector(`[data-approval="${CSS.escape(approval.id)}"]`)?.remove();
    // The answer's reply and the approval.resolved event both bring it: shown once.
    if (approval.status !== 'pending' && !this.resolved.has(approval.id)) {
      this.resolved.add(approval.id);
      this.log.append(
        h(
          'li',
          { class: 'msg progress approval-result' },
          `${approval.tool}: ${OUTCOME_WORDS[approval.status]}`,
          approval.answered_by ? ` by ${approval.answered_by}` : '',
        ),
      );
    }
  }

  private scroll(): void {
    this.log.scrollTop = this.log.scrollHeight;
  }
}

const OUTCOME_WORDS: Record<Approval['status'], string> = {
  pending: 'pending',
  yes: 'approved once',
  session: 'approved for this run',
  always: 'always allowed',
  no: 'denied',
  expired: 'expired',
};

/** How a grant reads: "write /w/proof.txt", "run echo". */
function describeGrant(grant: Approval['grants'][number]): string {
  const verb: Record<string, string> = {
    allowed_commands: 'run',
    allowed_domains: 'reach',
    allowed_paths_ro: 'read',
    allowed_files_ro: 'read',
    allowed_paths_rw: 'write',
    allowed_files_rw: 'write',
    allowed_mcp_tools: 'call',
  };
  return `${verb[grant.list] ?? grant.list} ${grant.value}`;
}

function timeOf(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime())
    ? ''
    : date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}
