// Live editing of one file: a Yjs document whose Y.Text "content" the editor binds to. Local
// changes become Yjs updates POSTed to the server (batched); updates from others arrive as SSE
// `collab.update` events. Every local change is counted until the server acknowledges it, so the
// save state shown is a fact, and nothing is dropped: failed sends are kept and retried, and after
// a reconnect the client sends whatever the server's state vector lacks (offline edits merge).
import * as Y from 'yjs';
import { ApiError, call, enc, fromBase64, getCsrfToken, toBase64 } from './api.ts';

/** Origin of updates that came from the server; everything else in the document is local. */
const REMOTE = Symbol('remote');
/**
 * Most bytes of updates merged into one request: the server refuses a single update over its
 * limit (256 KB by default), so a long offline session goes out in several requests.
 */
const MAX_BATCH_BYTES = 192 * 1024;

export interface SendState {
  /** Local changes the server has not acknowledged yet. */
  queued: number;
  /** The last send failed for want of a connection. */
  offline: boolean;
  /** The server refused the last send (kept, not retried until the next edit or reconnect). */
  refused: string | null;
}

export interface CollabOptions {
  note: string;
  fileId: number;
  clientId: string;
  readOnly: boolean;
  /** After any change of the text, local or remote. */
  onChange: () => void;
  /** After a local edit (for the typing indicator). */
  onLocalEdit: () => void;
  /** Whenever the count of unacknowledged changes or the connection verdict changes. */
  onSendState: (state: SendState) => void;
}

interface Batch {
  update: Uint8Array;
  /** How many local changes it carries. */
  count: number;
}

export class CollabSession {
  readonly doc = new Y.Doc();
  readonly text = this.doc.getText('content');
  private pending: Batch[] = [];
  private inflight: Batch | null = null;
  private flushTimer: number | undefined;
  private retryDelay = 250;
  private offline = false;
  private refused: string | null = null;
  private closed = false;
  private readonly path: string;

  constructor(private readonly options: CollabOptions) {
    this.path = `/api/notes/${enc(options.note)}/files/${options.fileId}/collab`;
    this.doc.on('update', this.onDocUpdate);
    this.text.observe(this.onTextChange);
  }

  /** Fetches the server's document (again, after a reconnect) and sends whatever it is missing. */
  async sync(): Promise<void> {
    // Named by this tab's id, the tab's event stream follows this file: only its updates arrive.
    const state = await call(
      'GET /api/notes/:note/files/:file/collab',
      { note: this.options.note, file: this.options.fileId },
      undefined,
      `?client_id=${encodeURIComponent(this.options.clientId)}`,
    );
    if (this.closed) return;
    const serverUpdate = fromBase64(state.state);
    Y.applyUpdate(this.doc, serverUpdate, REMOTE);
    if (!this.options.readOnly) {
      // Edits made while the connection was down: everything the server's state vector lacks. It
      // covers every queued batch, so it replaces them (keeping their count of changes).
      const missing = Y.encodeStateAsUpdate(this.doc, Y.encodeStateVectorFromUpdate(serverUpdate));
      const decoded = Y.decodeUpdate(missing);
      if ((decoded.structs.length > 0 || decoded.ds.clients.size > 0) && missing.length <= MAX_BATCH_BYTES) {
        const count = this.pending.reduce((sum, batch) => sum + batch.count, 0);
        this.pending = [{ update: missing, count: Math.max(count, 1) }];
        this.refused = null;
        this.retryDelay = 250;
        this.schedule(0);
      } else if (missing.length > MAX_BATCH_BYTES) {
        // Too big for one request: the queued batches (all the server lacks of ours) go one by one.
        this.refused = null;
        this.schedule(0);
      } else if (this.inflight === null) {
        // The server already has everything: queued batches were acknowledged in effect.
        this.pending = [];
      }
      this.offline = false;
      this.report();
    }
  }

  /** A `collab.update` event from the stream (someone else's; Yjs ignores what it already has). */
  applyRemote(update: string): void {
    if (this.closed) return;
    Y.applyUpdate(this.doc, fromBase64(update), REMOTE);
  }

  value(): string {
    return this.text.toString();
  }

  get queued(): number {
    return this.pending.reduce((sum, batch) => sum + batch.count, 0) + (this.inflight?.count ?? 0);
  }

  /** Stops listening; queued changes go out with `keepalive` so a page change does not lose them. */
  close(): void {
    this.closed = true;
    window.clearTimeout(this.flushTimer);
    for (let batch = this.merged(); batch; batch = this.merged()) {
      void fetch(this.path, {
        method: 'POST',
        keepalive: true,
        credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': getCsrfToken() ?? '' },
        body: JSON.stringify({ update: toBase64(batch.update), client_id: this.options.clientId }),
      }).catch(() => {});
    }
    this.text.unobserve(this.onTextChange);
    this.doc.off('update', this.onDocUpdate);
    this.doc.destroy();
  }

  private onTextChange = (): void => {
    this.options.onChange();
  };

  private onDocUpdate = (update: Uint8Array, origin: unknown): void => {
    if (origin === REMOTE || this.options.readOnly || this.closed) return;
    this.pending.push({ update, count: 1 });
    // A refused send is tried again with the next edit (the edit may be what fixes it).
    this.refused = null;
    this.options.onLocalEdit();
    this.report();
    if (this.inflight === null && this.flushTimer === undefined) this.schedule(40);
  };

  private schedule(delay: number): void {
    window.clearTimeout(this.flushTimer);
    this.flushTimer = window.setTimeout(() => void this.flush(), delay);
  }

  /** Takes the queued batches from the front, merged into one of at most MAX_BATCH_BYTES (or one). */
  private merged(): Batch | null {
    if (this.pending.length === 0) return null;
    let take = 1;
    let bytes = this.pending[0]!.update.length;
    while (take < this.pending.length && bytes + this.pending[take]!.update.length <= MAX_BATCH_BYTES) {
      bytes += this.pending[take]!.update.length;
      take++;
    }
    const taken = this.pending.splice(0, take);
    if (taken.length === 1) return taken[0]!;
    return {
      update: Y.mergeUpdates(taken.map((each) => each.update)),
      count: taken.reduce((sum, each) => sum + each.count, 0),
    };
  }

  private async flush(): Promise<void> {
    this.flushTimer = undefined;
    if (this.inflight !== null || this.closed) return;
    const batch = this.merged();
    if (!batch) return;
    this.inflight = batch;
    try {
      await call(
        'POST /api/notes/:note/files/:file/collab',
        { note: this.options.note, file: this.options.fileId },
        { update: toBase64(batch.update), client_id: this.options.clientId },
      );
      this.retryDelay = 250;
      this.offline = false;
    } catch (error) {
      if (this.closed) return;
      const apiError = error instanceof ApiError ? error : new ApiError(0, 'NETWORK', String(error));
      // Keep the batch whatever happened: Yjs merges it whenever it arrives.
      this.pending.unshift(batch);
      if (apiError.status === 0 || apiError.status >= 500 || apiError.status === 429) {
        this.offline = apiError.status === 0;
        this.retryDelay = Math.min(this.retryDelay * 2, 5000);
      } else {
        this.refused = apiError.message;
      }
    } finally {
      this.inflight = null;
    }
    if (this.closed) return;
    this.report();
    if (this.pending.length > 0 && this.refused === null) {
      this.schedule(this.offline || this.retryDelay > 250 ? this.retryDelay : 0);
    }
  }

  private report(): void {
    this.options.onSendState({ queued: this.queued, offline: this.offline, refused: this.refused });
  }
}
