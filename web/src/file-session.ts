// One open file in the workspace: its Yjs session, the CodeMirror editor bound to it (for people
// who may edit), remote cursors from presence, the incremental preview kept in step with the
// editor's scroll, and the save state shown in the pane head. Replaced whole when another file
// opens, so nothing of one file's session can leak into the next.
import * as Y from 'yjs';
import type { FileInfo, Note, Presence } from './api.ts';
import { PresenceAwareness } from './awareness.ts';
import { CollabSession, type SendState } from './collab.ts';
import type { MarkdownEditor } from './editor.ts';
import type { PresenceReporter } from './presence.ts';
import { LivePreview } from './preview.ts';
import { saveLabel } from './save-state.ts';
import { ScrollSync } from './scroll-sync.ts';
import type { Session } from './shell.ts';
import { toast } from './toast.ts';

/** Preview updates while typing: at most one per this many ms (each re-renders only changed blocks). */
const PREVIEW_EVERY_MS = 90;

type EditorModule = typeof import('./editor.ts');

export interface FileSessionOptions {
  note: Note;
  file: FileInfo;
  session: Session;
  canEdit: boolean;
  editorHost: HTMLElement;
  previewElement: HTMLElement;
  saveState: HTMLElement;
  presence: PresenceReporter;
  /** The editor chunk (started loading when the note opened); null for readers. */
  editorModule: Promise<EditorModule> | null;
  previewShown: () => boolean;
  onFiles: (files: File[], insert: (markdown: string) => void) => void;
  describedBy: string;
}

export class FileSession {
  readonly collab: CollabSession;
  private readonly awareness: PresenceAwareness;
  private readonly preview: LivePreview;
  private editor: MarkdownEditor | null = null;
  private scroll: ScrollSync | null = null;
  private send: SendState = { queued: 0, offline: false, refused: null };
  private revision: number;
  private streamDown = false;
  private previewTimer: number | undefined;
  private previewDirty = true;
  private closed = false;

  constructor(private readonly options: FileSessionOptions) {
    const { note, file, session, canEdit, presence } = options;
    this.revision = file.revision;
    this.collab = new CollabSession({
      note: String(note.id),
      fileId: file.id,
      clientId: session.clientId,
      readOnly: !canEdit,
      onChange: () => this.schedulePreview(),
      onLocalEdit: () => presence.edited(),
      onSendState: (state) => {
        this.send = state;
        this.showSaveState();
      },
    });
    this.awareness = new PresenceAwareness(this.collab.doc, session.user?.name ?? 'me', (cursor) =>
      presence.setCursor(cursor),
    );
    this.preview = new LivePreview(options.previewElement);
    presence.setFile(file.id);
    this.showSaveState();
  }

  /** Loads the document, then the editor; resolves when the file is shown and editable. */
  async open(): Promise<void> {
    try {
      await this.collab.sync();
    } catch (error) {
      toast(error);
    }
    if (this.closed) return;
    this.refreshPreview();
    if (this.options.canEdit && this.options.editorModule) {
      const { MarkdownEditor } = await this.options.editorModule;
      if (this.closed) return;
      this.editor = new MarkdownEditor({
        parent: this.options.editorHost,
        text: this.collab.text,
        awareness: this.awareness,
        readOnly: false,
        describedBy: this.options.describedBy,
        onFiles: (files, at) =>
          this.options.onFiles(files, (markdown) => this.editor?.insertAt(at, markdown)),
      });
      this.scroll = new ScrollSync(this.editor, {
        scroller: this.options.previewElement,
        topLine: () => this.preview.topLine(),
        topFor: (line) => this.preview.topFor(line),
      });
      this.options.editorHost.dataset['ready'] = '1';
    }
  }

  focus(): void {
    this.editor?.focus();
  }

  /** Inserts a link at this person's cursor, on a line of its own (the file pane's upload button). */
  insertAtCursor(markdown: string): boolean {
    if (!this.editor) return false;
    const { view } = this.editor;
    this.editor.insertAt(
      Y.createRelativePositionFromTypeIndex(this.collab.text, view.state.selection.main.head),
      markdown,
    );
    return true;
  }

  get fileId(): number {
    return this.options.file.id;
  }

  /** Unacknowledged local changes (the page warns before it is closed with some). */
  get queued(): number {
    return this.collab.queued;
  }

  applyRemote(update: string): void {
    this.collab.applyRemote(update);
  }

  /** The presence list; `ownId` is this tab's client id as the server stamped it. */
  setPresent(present: Presence[], ownId: string | null): void {
    this.awareness.setRemote(present, this.options.file.id, ownId);
  }

  saved(revision: number): void {
    this.revision = revision;
    this.showSaveState();
  }

  setStreamDown(down: boolean): void {
    this.streamDown = down;
    this.showSaveState();
  }

  async resync(): Promise<void> {
    await this.collab.sync();
  }

  /** The preview became visible (mode change): bring it up to date and in step. */
  refreshPreview(): void {
    this.previewDirty = true;
    this.schedulePreview(0);
  }

  close(): void {
    this.closed = true;
    window.clearTimeout(this.previewTimer);
    this.scroll?.destroy();
    this.editor?.destroy();
    this.awareness.destroy();
    this.collab.close();
    delete this.options.editorHost.dataset['ready'];
    this.options.editorHost.replaceChildren();
  }

  private showSaveState(): void {
    const label = saveLabel({
      readOnly: !this.options.canEdit,
      queued: this.send.queued,
      offline: this.send.offline || (this.streamDown && this.send.queued > 0),
      refused: this.send.refused,
      revision: this.revision,
    });
    const element = this.options.saveState;
    // Written only when it changes: every keystroke reports here, and a DOM write costs a layout.
    if (element.textContent !== label.text) element.textContent = label.text;
    if (element.dataset['state'] !== label.kind) element.dataset['state'] = label.kind;
  }

  private schedulePreview(delay = PREVIEW_EVERY_MS): void {
    this.previewDirty = true;
    if (this.previewTimer !== undefined && delay > 0) return;
    window.clearTimeout(this.previewTimer);
    this.previewTimer = window.setTimeout(() => {
      this.previewTimer = undefined;
      if (this.closed || !this.previewDirty || !this.options.previewShown()) return;
      this.previewDirty = false;
      void this.preview
        .update(this.collab.value())
        .then(() => this.scroll?.refresh())
        .catch((error) => toast(error));
    }, delay);
  }
}
