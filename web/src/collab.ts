// Live editing of one file: a Yjs document whose Y.Text "content" is bound to a <textarea>.
// Local keystrokes become Yjs updates POSTed to the server (batched); updates from others arrive
// as SSE `collab.update` events and are merged, keeping the local caret where the text moved it.
import * as Y from 'yjs';
import { ApiError, api, enc, fromBase64, getCsrfToken, toBase64 } from './api.ts';

const LOCAL = Symbol('local');
const REMOTE = Symbol('remote');

export interface CollabOptions {
  note: string;
  fileId: number;
  clientId: string;
  textarea: HTMLTextAreaElement;
  readOnly: boolean;
  /** After any change of the text, local or remote. */
  onChange: (text: string) => void;
  /** After a local edit (for the typing indicator). */
  onLocalEdit: () => void;
  onError: (error: ApiError) => void;
}

/** Index shifts of a caret through a Y.Text delta. */
function shift(position: number, delta: Y.YTextEvent['delta']): number {
  let index = 0;
  let result = position;
  for (const op of delta) {
    if (op.retain !== undefined) {
      index += op.retain;
    } else if (op.insert !== undefined) {
      const length = typeof op.insert === 'string' ? op.insert.length : 1;
      if (index <= position) result += length;
      index += length;
    } else if (op.delete !== undefined) {
      if (index < position) result -= Math.min(op.delete, position - index);
    }
    if (index > position) break;
  }
  return result;
}

export class CollabSession {
  private doc = new Y.Doc();
  private text = this.doc.getText('content');
  private shown = '';
  private pending: Uint8Array[] = [];
  private flushTimer: number | undefined;
  private sending = false;
  private retryDelay = 250;
  private closed = false;
  private composing = false;
  private readonly path: string;

  constructor(private readonly options: CollabOptions) {
    this.path = `/api/notes/${enc(options.note)}/files/${options.fileId}/collab`;
    const { textarea } = options;
    textarea.readOnly = options.readOnly;
    textarea.addEventListener('input', this.onInput);
    textarea.addEventListener('compositionstart', this.onCompositionStart);
    textarea.addEventListener('compositionend', this.onCompositionEnd);
    this.doc.on('update', this.onDocUpdate);
    this.text.observe(this.onTextChange);
  }

  /** Fetches the server's document (again, after a reconnect) and sends whatever it is missing. */
  async sync(): Promise<void> {
    const state = await api<{ state: string; revision: number; text: string }>('GET', this.path);
    if (this.closed) return;
    const serverUpdate = fromBase64(state.state);
    Y.applyUpdate(this.doc, serverUpdate, REMOTE);
    if (!this.options.readOnly) {
      // Edits made while the connection was down: everything the server's state vector lacks.
      const missing = Y.encodeStateAsUpdate(this.doc, Y.encodeStateVectorFromUpdate(serverUpdate));
      if (Y.decodeUpdate(missing).structs.length > 0 || Y.decodeUpdate(missing).ds.clients.size > 0) {
        this.queue(missing);
      }
    }
    this.render();
  }

  /** A `collab.update` event from the stream. */
  applyRemote(update: string, clientId: string): void {
    if (clientId === this.options.clientId || this.closed) return;
    Y.applyUpdate(this.doc, fromBase64(update), REMOTE);
  }

  value(): string {
    return this.text.toString();
  }

  close(): void {
    this.closed = true;
    window.clearTimeout(this.flushTimer);
    const { textarea } = this.options;
    textarea.removeEventListener('input', this.onInput);
    textarea.removeEventListener('compositionstart', this.onCompositionStart);
    textarea.removeEventListener('compositionend', this.onCompositionEnd);
    if (this.pending.length > 0) void this.flush(true);
    this.doc.destroy();
  }

  private onCompositionStart = (): void => {
    this.composing = true;
  };
  private onCompositionEnd = (): void => {
    this.composing = false;
    this.onInput();
  };

  /** The textarea changed: apply the minimal splice between what was shown and what is there now. */
  private onInput = (): void => {
    if (this.composing || this.options.readOnly) return;
    const next = this.options.textarea.value;
    const prev = this.shown;
    if (next === prev) return;
    let start = 0;
    const max = Math.min(prev.length, next.length);
    while (start < max && prev.charCodeAt(start) === next.charCodeAt(start)) start++;
    let endPrev = prev.length;
    let endNext = next.length;
    while (
      endPrev > start &&
      endNext > start &&
      prev.charCodeAt(endPrev - 1) === next.charCodeAt(endNext - 1)
    ) {
      endPrev--;
      endNext--;
    }
    this.shown = next;
    this.doc.transact(() => {
      if (endPrev > start) this.text.delete(start, endPrev - start);
      if (endNext > start) this.text.insert(start, next.slice(start, endNext));
    }, LOCAL);
    this.options.onChange(next);
    this.options.onLocalEdit();
  };

  private onTextChange = (event: Y.YTextEvent, transaction: Y.Transaction): void => {
    if (transaction.origin === LOCAL) return;
    const { textarea } = this.options;
    const focused = document.activeElement === textarea;
    const start = shift(textarea.selectionStart, event.delta);
    const end = shift(textarea.selectionEnd, event.delta);
    this.render();
    if (focused) textarea.setSelectionRange(start, end);
  };

  private render(): void {
    const value = this.text.toString();
    if (value !== this.options.textarea.value) {
      const { scrollTop } = this.options.textarea;
      this.options.textarea.value = value;
      this.options.textarea.scrollTop = scrollTop;
    }
    this.shown = value;
    this.options.onChange(value);
  }

  private onDocUpdate = (update: Uint8Array, origin: unknown): void => {
    if (origin === REMOTE || this.options.readOnly) return;
    this.queue(update);
  };

  private queue(update: Uint8Array): void {
    this.pending.push(update);
    if (this.flushTimer === undefined && !this.sending) {
      this.flushTimer = window.setTimeout(() => void this.flush(), 40);
    }
  }

  private async flush(keepalive = false): Promise<void> {
    this.flushTimer = undefined;
    if (this.pending.length === 0 || this.sending) return;
    const batch = this.pending.length === 1 ? this.pending[0]! : Y.mergeUpdates(this.pending);
    this.pending = [];
    this.sending = true;
    try {
      if (keepalive) {
        await fetch(this.path, {
          method: 'POST',
          keepalive: true,
          headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': getCsrfToken() ?? '' },
          body: JSON.stringify({ update: toBase64(batch), client_id: this.options.clientId }),
        });
      } else {
        await api('POST', this.path, { update: toBase64(batch), client_id: this.options.clientId });
      }
      this.retryDelay = 250;
    } catch (error) {
      const apiError = error instanceof ApiError ? error : new ApiError(0, 'NETWORK', String(error));
      if (this.closed) return;
      // A network failure or a server restart: keep the update (Yjs merges it whenever it arrives).
      if (apiError.status === 0 || apiError.status >= 500 || apiError.status === 429) {
        this.pending.unshift(batch);
        this.retryDelay = Math.min(this.retryDelay * 2, 5000);
      } else {
        this.options.onError(apiError);
      }
    } finally {
      this.sending = false;
    }
    if (this.pending.length > 0 && !this.closed) {
      this.flushTimer = window.setTimeout(() => void this.flush(), this.retryDelay);
    }
  }
}
