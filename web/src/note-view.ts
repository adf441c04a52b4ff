// One note's workspace: the files pane, the open file (editor, live preview, save state, remote
// cursors), presence, history, and the chat pane, all kept current by the note's event stream.
// Loaded as its own chunk when a note is opened; the editor chunk (CodeMirror) only for editors.
import { ApiError, call, enc, type FileInfo, type Note, type Presence, rank, send } from './api.ts';
import { colourFor } from './awareness.ts';
import { ChatPane } from './chat.ts';
import { clear, h } from './dom.ts';
import { EventStream } from './events.ts';
import { FileSession } from './file-session.ts';
import { openHistory } from './history.ts';
import { FilesPane } from './note-files.ts';
import { PresenceReporter } from './presence.ts';
import { fileHref, type Session, setCrumbs } from './shell.ts';
import { toast } from './toast.ts';

type Mode = 'edit' | 'split' | 'preview';
type Pane = 'files' | 'editor' | 'chat';
const SAFE_IMAGE = /^image\/(png|jpeg|gif|webp|avif)$/;
const HINT_ID = 'editor-keys-hint';

export class NoteView {
  noteName: string;
  private note!: Note;
  private files!: FilesPane;
  private current: FileInfo | null = null;
  private fileSession: FileSession | null = null;
  private stream: EventStream | null = null;
  private chat!: ChatPane;
  private presence!: PresenceReporter;
  private present: Presence[] = [];
  /** This tab's client id as the server stamped it (the `hello` event says it). */
  private stampedId: string | null = null;
  /** The event stream has joined the note once (its first `hello`). */
  private streamJoined = false;
  private mode: Mode = 'preview';
  private closed = false;
  private readonly canEdit: boolean;
  private readonly isAdmin: boolean;
  private readonly editorModule: Promise<typeof import('./editor.ts')> | null;

  private root = h('div', { class: 'workspace', 'data-pane': 'editor' });
  private fileTitle = h('h2', { class: 'file-title' });
  private saveState = h('span', { class: 'save-state', role: 'status', 'aria-live': 'polite' });
  private presenceBar = h('div', { class: 'presence', 'aria-label': 'Who is here' });
  private typingLine = h('div', { class: 'typing muted', 'aria-live': 'polite' });
  private editorHost = h('div', { class: 'editor-host' });
  private preview = h('article', { class: 'preview markdown', 'aria-label': 'Preview', tabindex: 0 });
  private editorBody = h('div', { class: 'editor-body' });
  private modeButtons = h('div', { class: 'tabs modes', role: 'tablist', 'aria-label': 'View' });
  private historyButton = h('button', { type: 'button', class: 'small', disabled: true }, 'History');
  private connection = h('span', { class: 'connection', title: 'live' });

  constructor(
    private readonly view: HTMLElement,
    noteName: string,
    private readonly session: Session,
    /** The editor chunk, when the app already started loading it with this chunk. */
    editorModule?: Promise<typeof import('./editor.ts')>,
  ) {
    this.noteName = noteName;
    this.canEdit = rank[session.role] >= rank.user;
    this.isAdmin = session.role === 'admin';
    this.editorModule = this.canEdit ? (editorModule ?? import('./editor.ts')) : null;
  }

  async load(fileName: string | null): Promise<void> {
    const { note, files } = await call('GET /api/notes/:note', { note: this.noteName });
    this.note = note;
    this.chat = new ChatPane(note, this.session);
    this.presence = new PresenceReporter(note.id, this.session.clientId, this.session.role !== 'anonymous');
    this.files = new FilesPane(
      {
        canEdit: this.canEdit,
        isAdmin: this.isAdmin,
        note: () => this.note,
        setNote: (changed) => {
          this.note = changed;
        },
        currentId: () => this.current?.id ?? null,
        opened: () => this.showPane('editor'),
        changed: (file) => this.fileChanged(file),
        removed: (id) => this.fileRemoved(id),
        upload: (list) => void this.upload(list),
      },
      files,
    );
    this.build();
    window.addEventListener('beforeunload', this.onBeforeUnload);
    this.stream = new EventStream(
      note.id,
      this.session.clientId,
      (data, name) => this.onEvent(name, data),
      (state) => {
        this.connection.className = `connection ${state}`;
        this.connection.title = state;
        this.fileSession?.setStreamDown(state !== 'live');
      },
      () => void this.resync(),
    );
    await Promise.all([this.openFile(fileName), this.chat.load().catch(toast)]);
  }

  close(): void {
    this.closed = true;
    window.removeEventListener('beforeunload', this.onBeforeUnload);
    this.fileSession?.close();
    this.presence?.close();
    this.stream?.close();
  }

  /** Leaving with changes the server has not acknowledged asks first (they are kept otherwise). */
  private onBeforeUnload = (event: BeforeUnloadEvent): void => {
    if ((this.fileSession?.queued ?? 0) > 0) event.preventDefault();
  };

  private build(): void {
    setCrumbs(h('a', { href: '#/' }, 'notes'), h('a', { href: fileHref(this.note.name) }, this.note.name));
    const stored = localStorage.getItem('rune-editor-mode') as Mode | null;
    const mode = stored === 'edit' || stored === 'split' || stored === 'preview' ? stored : 'split';
    this.historyButton.addEventListener('click', () => {
      if (this.current) void openHistory(this.note.id, this.current, this.session);
    });
    this.preview.addEventListener('click', (event) => this.followLink(event));
    const hint = h(
      'p',
      { id: HINT_ID, class: 'visually-hidden' },
      'Markdown editor. Tab indents list items; press Escape and then Tab to move on. ',
      'Ctrl+F finds and replaces, Ctrl+Z undoes your own changes only.',
    );
    clear(this.editorBody, this.editorHost, this.preview);
    const editor = h(
      'section',
      { class: 'editor', 'aria-label': 'Editor' },
      h(
        'header',
        { class: 'pane-head' },
        this.fileTitle,
        this.saveState,
        h('span', { class: 'spacer' }),
        this.presenceBar,
        this.connection,
        this.modeButtons,
        this.canEdit ? this.keysHelp() : null,
        this.historyButton,
      ),
      hint,
      this.typingLine,
      this.editorBody,
    );
    const tabs = h(
      'nav',
      { class: 'mobile-tabs', 'aria-label': 'Panes' },
      (['files', 'editor', 'chat'] as Pane[]).map((pane) =>
        h(
          'button',
          { type: 'button', 'data-pane': pane, onclick: () => this.showPane(pane) },
          pane === 'files' ? 'Files' : pane === 'editor' ? 'Editor' : 'Chat',
        ),
      ),
    );
    // Keyboard users reach the editor without tabbing through every file and its buttons.
    const skip = this.canEdit
      ? h(
          'a',
          {
            href: '#',
            class: 'skip-link',
            onclick: (event: Event) => {
              event.preventDefault();
              this.showPane('editor');
              if (this.mode === 'preview') this.setMode('split');
              this.fileSession?.focus();
            },
          },
          'Skip to the editor',
        )
      : null;
    clear(this.root, skip, this.files.element, editor, this.chat.element, tabs);
    clear(this.view, this.root);
    this.setMode(this.canEdit ? mode : 'preview');
    this.showPane('editor');
  }

  /** A list of the editor's keys, for people who do not know CodeMirror's. */
  private keysHelp(): HTMLElement {
    const list = h('dl', { class: 'keys-list' });
    const details = h(
      'details',
      {
        class: 'keys-help',
        ontoggle: async () => {
          if (!details.open || list.childElementCount > 0 || !this.editorModule) return;
          const { MARKDOWN_KEYS } = await this.editorModule;
          const mac = /Mac|iPhone|iPad/.test(navigator.platform);
          // "Mod-Shift-z" → "Ctrl+Shift+Z", as keys are printed on keyboards.
          const show = (key: string) =>
            key
              .split('-')
              .map((part) =>
                part === 'Mod' ? (mac ? '⌘' : 'Ctrl') : part.length === 1 ? part.toUpperCase() : part,
              )
              .join('+');
          const rows: Array<[string, string]> = [
            ...MARKDOWN_KEYS.map((each): [string, string] => [show(each.key ?? ''), each.label]),
            ['Shift+Tab', 'outdent'],
            ['Enter', 'continue the list or quote'],
            [show('Mod-z'), 'undo your last change'],
            [show('Mod-Shift-z'), 'redo'],
            [show('Mod-f'), 'find and replace'],
            ['Escape, Tab', 'leave the editor'],
          ];
          clear(
            list,
            rows.flatMap(([key, label]) => [h('dt', {}, h('kbd', {}, key)), h('dd', {}, label)]),
          );
        },
      },
      h('summary', { class: 'button small', title: 'Keyboard shortcuts' }, 'Keys'),
      h('div', { class: 'keys-panel card' }, list),
    );
    return details;
  }

  private showPane(pane: Pane): void {
    this.root.dataset['pane'] = pane;
    for (const button of this.root.querySelectorAll<HTMLButtonElement>('.mobile-tabs button')) {
      button.classList.toggle('active', button.dataset['pane'] === pane);
    }
  }

  private setMode(mode: Mode): void {
    this.mode = mode;
    this.editorBody.className = `editor-body mode-${mode}`;
    // Both stay in the document (hidden, not removed), so the editor keeps its state and measures.
    this.editorHost.hidden = mode === 'preview';
    this.preview.hidden = mode === 'edit';
    clear(
      this.modeButtons,
      (this.canEdit ? (['edit', 'split', 'preview'] as Mode[]) : []).map((each) =>
        h(
          'button',
          {
            type: 'button',
            role: 'tab',
            'aria-selected': String(each === mode),
            class: each === mode ? 'tab active' : 'tab',
            onclick: () => {
              localStorage.setItem('rune-editor-mode', each);
              this.setMode(each);
            },
          },
          each === 'edit' ? 'Edit' : each === 'split' ? 'Split' : 'Preview',
        ),
      ),
    );
    if (mode !== 'edit') this.fileSession?.refreshPreview();
  }

  private fileChanged(file: FileInfo): void {
    if (this.current?.id !== file.id) return;
    const renamed = this.current.name !== file.name;
    this.current = { ...this.current, ...file };
    this.fileTitle.textContent = file.name;
    if (renamed) history.replaceState(null, '', fileHref(this.note.name, file));
  }

  private fileRemoved(id: number): void {
    if (this.current?.id === id) {
      toast('This file was deleted.', 'info');
      location.hash = fileHref(this.note.name);
    }
  }

  /** Opens a file by name (or the first one) in the editor, replacing the previous live session. */
  async openFile(fileName: string | null): Promise<void> {
    const visible = this.files.files.filter((each) => !each.deleted_at);
    let file = fileName ? visible.find((each) => each.name === fileName) : undefined;
    if (!file && fileName) toast(`No file named "${fileName}" in this note.`);
    if (!file && !fileName) {
      file = visible.find((each) => /^(index|readme)\.md$/i.test(each.name)) ?? visible[0];
      if (file) history.replaceState(null, '', fileHref(this.note.name, file));
    }
    this.fileSession?.close();
    this.fileSession = null;
    this.current = file ?? null;
    this.files.render();
    this.historyButton.disabled = !file;
    if (!file) {
      this.fileTitle.textContent = '';
      this.saveState.textContent = '';
      clear(
        this.preview,
        h('p', { class: 'muted' }, this.canEdit ? 'Create a file to start writing.' : 'No file to show.'),
      );
      this.presence.setFile(null);
      return;
    }
    this.fileTitle.textContent = file.name;
    setCrumbs(
      h('a', { href: '#/' }, 'notes'),
      h('a', { href: fileHref(this.note.name) }, this.note.name),
      h('span', {}, file.name),
    );
    document.title = `${file.name} · ${this.note.name} · rune notes`;
    const session = new FileSession({
      note: this.note,
      file,
      session: this.session,
      canEdit: this.canEdit,
      editorHost: this.editorHost,
      previewElement: this.preview,
      saveState: this.saveState,
      presence: this.presence,
      editorModule: this.editorModule,
      previewShown: () => this.mode !== 'edit',
      onFiles: (list, insert) => void this.upload(list, insert),
      describedBy: HINT_ID,
    });
    this.fileSession = session;
    session.setPresent(this.present, this.stampedId);
    await session.open();
  }

  /** Uploads files; each link goes where `insert` puts it (the drop point), else the cursor. */
  private async upload(files: File[], insert?: (markdown: string) => void): Promise<void> {
    for (const file of files) {
      try {
        const result = await send(
          'POST /api/notes/:note/uploads',
          { note: this.note.id },
          file,
          `?name=${enc(file.name)}`,
        );
        const label = result.name.replace(/[[\]\\]/g, '');
        const markdown = SAFE_IMAGE.test(result.type)
          ? `![${label}](${result.url})`
          : `[${label}](${result.url})`;
        if (insert) insert(markdown);
        else if (!this.fileSession?.insertAtCursor(markdown)) toast(`Uploaded: ${result.url}`, 'info');
      } catch (error) {
        toast(
          error instanceof ApiError && error.code === 'TOO_LARGE' ? `${file.name}: ${error.message}` : error,
        );
      }
    }
  }

  private renderPresence(): void {
    const others = new Map<string, Presence>();
    for (const person of this.present) {
      const prev = others.get(person.name);
      // One chip per person; prefer the entry on this file and the one typing.
      if (
        !prev ||
        (person.file_id === this.current?.id && (prev.file_id !== this.current?.id || person.typing))
      ) {
        others.set(person.name, person);
      }
    }
    clear(
      this.presenceBar,
      [...others.values()].map((person) => {
        const chip = h(
          'span',
          {
            class: `who${person.file_id === this.current?.id ? ' here' : ''}${person.typing ? ' typing' : ''}`,
            title: `${person.name} (${person.role})${person.file_id ? ` in ${this.files.fileName(person.file_id)}` : ''}`,
          },
          person.name.slice(0, 2),
        );
        chip.style.setProperty('--who', colourFor(person.name));
        return chip;
      }),
    );
    const typing = this.present.filter(
      (person) => person.typing && person.file_id === this.current?.id && person.client_id !== this.stampedId,
    );
    const names = [...new Set(typing.map((person) => person.name))];
    this.typingLine.textContent = names.length
      ? `${names.join(', ')} ${names.length === 1 ? 'is' : 'are'} typing…`
      : '';
    this.files.setPresent(this.present);
  }

  private async resync(): Promise<void> {
    try {
      const { note, files } = await call('GET /api/notes/:note', { note: this.note.id });
      this.note = note;
      this.files.setFiles(files);
      await Promise.all([this.fileSession?.resync(), this.chat.load()]);
      this.presence.announce();
    } catch (error) {
      toast(error);
    }
  }

  /** Links between files of the note (`[x](other.md)`) open in the editor instead of leaving the app. */
  private followLink(event: MouseEvent): void {
    const anchor = (event.target as Element).closest('a');
    const href = anchor?.getAttribute('href');
    if (!href || /^[a-z][a-z0-9+.-]*:|^[/#]/i.test(href)) return;
    let name: string;
    try {
      name = decodeURIComponent(href.split('#')[0]!);
    } catch {
      return;
    }
    if (this.files.files.some((file) => file.name === name)) {
      event.preventDefault();
      location.hash = fileHref(this.note.name, name);
    }
  }

  private onEvent(name: string, data: Record<string, unknown>): void {
    if (this.closed) return;
    const fileId = data['file_id'] as number | undefined;
    switch (name) {
      case 'hello':
        this.stampedId = typeof data['client_id'] === 'string' ? data['client_id'] : null;
        this.presence.announce();
        // The open file was fetched before the stream joined the note: fetched again now, the
        // updates made in between are not missed, and the stream follows that file.
        if (!this.streamJoined && this.fileSession) void this.fileSession.resync().catch(toast);
        this.streamJoined = true;
        break;
      case 'note.updated': {
        const note = data['note'] as Note;
        if (note.id !== this.note.id) break;
        const renamed = note.name !== this.note.name;
        this.note = note;
        this.noteName = note.name;
        this.chat.setNote(note);
        this.files.renderHead();
        if (renamed) history.replaceState(null, '', fileHref(note.name, this.current));
        break;
      }
      case 'note.deleted':
        if (data['note_id'] === this.note.id) {
          toast('This note was deleted.', 'info');
          location.hash = '#/';
        }
        break;
      case 'access.revoked':
        toast('You no longer have access to this note.');
        location.hash = '#/';
        break;
      case 'file.created':
      case 'file.updated':
        this.files.upsert(data['file'] as FileInfo);
        break;
      case 'file.deleted':
        if (typeof fileId === 'number') this.files.remove(fileId);
        break;
      case 'file.saved':
        if (this.current && fileId === this.current.id) {
          this.current.revision = Number(data['revision']);
          this.fileSession?.saved(this.current.revision);
        }
        break;
      case 'collab.update':
        // Our own updates come back too (harmless: Yjs applies an update once); skip them.
        if (this.fileSession && fileId === this.fileSession.fileId && data['client_id'] !== this.stampedId) {
          this.fileSession.applyRemote(String(data['update']));
        }
        break;
      case 'collab.reset':
        if (fileId === this.current?.id) void this.openFile(this.current?.name ?? null);
        break;
      case 'presence':
        this.present = (data['present'] as Presence[]) ?? [];
        this.fileSession?.setPresent(this.present, this.stampedId);
        this.renderPresence();
        break;
      case 'presence.changed': {
        // Only what changed since the last one: entries that joined or changed, ids that left.
        const set = (data['set'] as Presence[]) ?? [];
        const gone = new Set([...((data['gone'] as string[]) ?? []), ...set.map((p) => p.client_id)]);
        this.present = [...this.present.filter((p) => !gone.has(p.client_id)), ...set];
        this.fileSession?.setPresent(this.present, this.stampedId);
        this.renderPresence();
        break;
      }
      default:
        if (name.startsWith('chat.') || name.startsWith('approval.')) this.chat.handle(name, data);
    }
  }
}
