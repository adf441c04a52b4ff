// The server's event stream for one note (or for the note list): EventSource reconnects by itself
// and sends Last-Event-ID, so the server replays what was missed; live-only state (collab text,
// chat tokens, presence) is refetched by the caller in `onReconnect`.
export type EventHandler = (data: Record<string, unknown>, name: string) => void;

const NAMES = [
  'hello',
  'note.created',
  'note.updated',
  'note.deleted',
  'file.created',
  'file.updated',
  'file.saved',
  'file.deleted',
  'collab.update',
  'collab.reset',
  'presence',
  'presence.changed',
  'chat.message',
  'chat.token',
  'chat.progress',
  'chat.done',
  'approval.requested',
  'approval.resolved',
  'access.revoked',
];

export class EventStream {
  private source: EventSource | null = null;
  private opened = 0;
  private closed = false;
  private retryTimer: number | undefined;
  private lastId = '';

  constructor(
    private readonly noteId: number | null,
    /** Ties this stream to the tab's presence (`POST …/presence` names the same id). */
    private readonly clientId: string,
    private readonly onEvent: EventHandler,
    private readonly onState: (state: 'live' | 'reconnecting' | 'closed') => void,
    private readonly onReconnect: () => void,
  ) {
    this.open();
  }

  private open(): void {
    const query = new URLSearchParams({ client_id: this.clientId });
    if (this.noteId !== null) query.set('note_id', String(this.noteId));
    // A new EventSource cannot send the Last-Event-ID header; the server takes it as a parameter.
    if (this.lastId) query.set('last_event_id', this.lastId);
    const url = `/api/events?${query}`;
    const source = new EventSource(url, { withCredentials: true });
    this.source = source;
    source.onopen = () => {
      this.opened++;
      this.onState('live');
      if (this.opened > 1) this.onReconnect();
    };
    source.onerror = () => {
      if (this.closed) return;
      this.onState('reconnecting');
      // CLOSED means the browser gave up (an HTTP error answer): start over after a pause; live-only
      // state is refetched by onReconnect.
      if (source.readyState === EventSource.CLOSED) {
        window.clearTimeout(this.retryTimer);
        this.retryTimer = window.setTimeout(() => {
          if (!this.closed) this.open();
        }, 3000);
      }
    };
    for (const name of NAMES) {
      source.addEventListener(name, (event) => {
        const { lastEventId } = event as MessageEvent<string>;
        if (lastEventId) this.lastId = lastEventId;
        let data: Record<string, unknown>;
        try {
          data = JSON.parse((event as MessageEvent<string>).data);
        } catch {
          return;
        }
        if (name === 'access.revoked') {
          this.close();
        }
        this.onEvent(data, name);
      });
    }
  }

  close(): void {
    this.closed = true;
    window.clearTimeout(this.retryTimer);
    this.source?.close();
    this.onState('closed');
  }
}
