// This tab's presence in a note: which file it has open, whether its person is typing, and (for
// editors) where the cursor is, as the entry's `state`. Sent with POST …/presence, at most one request at a time and one
// per MIN_GAP_MS, always with the latest state, so a moving cursor costs a few requests a second.
import { call } from './api.ts';
import type { Cursor } from './awareness.ts';

const MIN_GAP_MS = 120;
/** A person counts as typing this long after their last edit. */
const TYPING_MS = 3000;

export class PresenceReporter {
  private fileId: number | null = null;
  private cursor: Cursor | null = null;
  private lastEdit = 0;
  private lastSent = 0;
  private sending = false;
  private again = false;
  private timer: number | undefined;
  private closed = false;

  constructor(
    private readonly noteId: number,
    private readonly clientId: string,
    /** Anonymous readers have no presence to report. */
    private readonly enabled: boolean,
  ) {}

  /** A file was opened (or none): its cursor is not known yet. */
  setFile(fileId: number | null): void {
    this.fileId = fileId;
    this.cursor = null;
    this.push();
  }

  setCursor(cursor: Cursor | null): void {
    this.cursor = cursor;
    this.push();
  }

  /** A local edit: typing starts now (sent at once when it was not typing before). */
  edited(): void {
    const wasTyping = Date.now() - this.lastEdit < TYPING_MS;
    this.lastEdit = Date.now();
    if (!wasTyping) this.push();
  }

  /** Sends the current state again (a new or reconnected event stream knows nothing of us). */
  announce(): void {
    this.push();
  }

  close(): void {
    this.closed = true;
    window.clearTimeout(this.timer);
  }

  private push(): void {
    if (!this.enabled || this.closed) return;
    if (this.sending) {
      this.again = true;
      return;
    }
    window.clearTimeout(this.timer);
    const wait = Math.max(0, this.lastSent + MIN_GAP_MS - Date.now());
    this.timer = window.setTimeout(() => void this.send(), wait);
  }

  private async send(): Promise<void> {
    if (this.closed) return;
    this.sending = true;
    this.again = false;
    this.lastSent = Date.now();
    try {
      await call(
        'POST /api/notes/:note/presence',
        { note: this.noteId },
        {
          client_id: this.clientId,
          file_id: this.fileId,
          typing: Date.now() - this.lastEdit < TYPING_MS,
          // The bounded free-form part of presence; other editors draw the cursor from it.
          state: this.cursor && this.fileId !== null ? { cursor: this.cursor } : null,
        },
      );
    } catch {
      // Presence is a courtesy; a failed update must not disturb editing.
    } finally {
      this.sending = false;
    }
    if (this.again) this.push();
  }
}
