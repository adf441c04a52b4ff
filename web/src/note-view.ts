// One note's workspace: the file list (create, rename, publish, delete, restore, upload), the
// collaborative editor with its live preview, presence, history, and the chat pane, all kept
// current by the note's event stream.
import { ApiError, api, enc, type FileInfo, type Note, type Presence, rank } from './api.ts';
import { ChatPane } from './chat.ts';
import { CollabSession } from './collab.ts';
import { clear, h } from './dom.ts';
import { EventStream } from './events.ts';
import { openHistory } from './history.ts';
import { renderMarkdown } from './render.ts';
import { openSearch } from './search.ts';
import { fileHref, type Session, setCrumbs } from './shell.ts';
import { toast } from './toast.ts';

type Mode = 'edit' | 'split' | 'preview';
type Pane = 'files' | 'editor' | 'chat';
const SAFE_IMAGE = /^image\/(png|jpeg|gif|webp|avif)$/;

export class NoteView {
  noteName: string;
  private note!: Note;
  private files: FileInfo[] = [];
  private current: FileInfo | null = null;
  private collab: CollabSession | null = null;
  private stream: EventStream | null = null;
  private chat!: ChatPane;
  private present: Presence[] = [];
  /** This tab's client id as the server stamped it (the `hello` event says it). */
  private stampedId: string | null = null;
  private closed = false;
  private lastTypingSent = 0;
  private previewTimer: number | undefined;
  private readonly canEdit: boolean;
  private readonly isAdmin: boolean;

  private root = h('div', { class: 'workspace', 'data-pane': 'editor' });
  private fileList = h('ul', { class: 'file-list' });
  private trashList = h('ul', { class: 'file-list trash' });
  private noteHead = h('header', { class: 'pane-head note-head' });
  private fileTitle = h('h2', { class: 'file-title' });
  private saveState = h('span', { class: 'save-state muted', 'aria-live': 'polite' });
  private presenceBar = h('div', { class: 'presence', 'aria-label': 'Who is here' });
  private typingLine = h('div', { class: 'typing muted', 'aria-live': 'polite' });
  private textarea = h('textarea', {
    class: 'editor-text',
    spellcheck: false,
    'aria-label': 'Markdown source',
    placeholder: 'Write Markdown…',
  });
  private preview = h('article', { class: 'preview markdown', 'aria-label': 'Preview' });
  private editorBody = h('div', { class: 'editor-body' });
  private modeButtons = h('div', { class: 'tabs modes', role: 'tablist' });
  private historyButton = h('button', { type: 'button', class: 'small', disabled: true }, 'History');
  private connection = h('span', { class: 'connection', title: 'live' });

  constructor(
    private readonly view: HTMLElement,
    noteName: string,
    private readonly session: Session,
  ) {
    this.noteName = noteName;
    this.canEdit = rank[session.role] >= rank.user;
    this.isAdmin = session.role === 'admin';
  }

  async load(fileName: string | null): Promise<void> {
    const { note, files } = await api<{ note: Note; files: FileInfo[] }>(
      'GET',
      `/api/notes/${enc(this.noteName)}`,
    );
    this.note = note;
    this.files = files;
    this.chat = new ChatPane(note, this.session);
    this.build();
    this.stream = new EventStream(
      note.id,
      this.session.clientId,
      (data, name) => this.onEvent(name, data),
      (state) => {
        this.connection.className = `connection ${state}`;
        this.connection.title = state;
      },
      () => void this.resync(),
    );
    await Promise.all([this.openFile(fileName), this.chat.load().catch(toast)]);
  }

  close(): void {
    this.closed = true;
    this.collab?.close();
    this.stream?.close();
    window.clearTimeout(this.previewTimer);
  }

  private build(): void {
    setCrumbs(h('a', { href: '#/' }, 'notes'), h('a', { href: fileHref(this.note.name) }, this.note.name));
    const mode =
      (localStorage.getItem('rune-editor-mode') as Mode | null) ?? (this.canEdit ? 'split' : 'preview');
    this.setMode(this.canEdit ? mode : 'preview');
    this.historyButton.addEventListener('click', () => {
      if (this.current) void openHistory(this.note.id, this.current, this.session);
    });
    this.preview.addEventListener('click', (event) => this.followLink(event));
    this.textarea.addEventListener('dragover', (event) => {
      if (this.canEdit && event.dataTransfer?.types.includes('Files')) event.preventDefault();
    });
    this.textarea.addEventListener('drop', (event) => {
      if (!this.canEdit || !event.dataTransfer?.files.length) return;
      event.preventDefault();
      void this.upload([...event.dataTransfer.files]);
    });
    this.textarea.addEventListener('paste', (event) => {
      const files = [...(event.clipboardData?.files ?? [])];
      if (this.canEdit && files.length > 0) {
        event.preventDefault();
        void this.upload(files);
      }
    });
    this.renderNoteHead();
    this.renderFiles();
    const newName = h('input', {
      name: 'file',
      placeholder: 'new-file.md',
      required: true,
      maxlength: 120,
      'aria-label': 'New file name',
    });
    const uploadInput = h('input', {
      type: 'file',
      multiple: true,
      class: 'visually-hidden',
      'aria-label': 'Upload files',
    });
    uploadInput.addEventListener('change', () => {
      void this.upload([...(uploadInput.files ?? [])]);
      uploadInput.value = '';
    });
    const aside = h(
      'aside',
      { class: 'files', 'aria-label': 'Files' },
      this.noteHead,
      this.fileList,
      this.canEdit
        ? h(
            'form',
            {
              class: 'new-file',
              onsubmit: async (event: Event) => {
                event.preventDefault();
                let name = newName.value.trim();
                if (!name) return;
                if (!/\.[a-z0-9]+$/i.test(name)) name += '.md';
                try {
                  const file = await api<FileInfo>('POST', `/api/notes/${this.note.id}/files`, {
                    name,
                    content: '',
                  });
                  newName.value = '';
                  this.upsertFile(file);
                  location.hash = fileHref(this.note.name, file);
                } catch (error) {
                  toast(error);
                }
              },
            },
            newName,
            h('button', { type: 'submit', class: 'small primary', title: 'Create file' }, '+ File'),
          )
        : null,
      this.canEdit ? h('label', { class: 'button small upload' }, uploadInput, 'Upload…') : null,
      this.canEdit
        ? h(
            'details',
            {
              class: 'trash',
              ontoggle: (event: Event) => {
                if ((event.target as HTMLDetailsElement).open) void this.loadTrash();
              },
            },
            h('summary', {}, 'Deleted files'),
            this.trashList,
          )
        : null,
      h(
        'p',
        { class: 'note-links' },
        h('a', { href: `/api/notes/${this.note.id}/export?format=zip`, download: '' }, 'Export .zip'),
        this.note.public
          ? [
              ' · ',
              h(
                'a',
                { href: `/notes/${enc(this.note.name)}/`, target: '_blank', rel: 'noopener' },
                'Public page',
              ),
            ]
          : null,
      ),
    );
    const search = h('input', {
      type: 'search',
      placeholder: 'Search this note',
      'aria-label': 'Search this note',
    });
    search.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && search.value.trim())
        void openSearch(search.value.trim(), String(this.note.id));
    });
    aside.insertBefore(search, this.fileList);
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
        this.historyButton,
      ),
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
    clear(this.root, aside, editor, this.chat.element, tabs);
    clear(this.view, this.root);
    this.showPane('editor');
  }

  private showPane(pane: Pane): void {
    this.root.dataset['pane'] = pane;
    for (const button of this.root.querySelectorAll<HTMLButtonElement>('.mobile-tabs button')) {
      button.classList.toggle('active', button.dataset['pane'] === pane);
    }
  }

  private setMode(mode: Mode): void {
    this.editorBody.className = `editor-body mode-${mode}`;
    clear(this.editorBody, mode === 'preview' ? null : this.textarea, mode === 'edit' ? null : this.preview);
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
    if (mode !== 'edit') this.schedulePreview(0);
  }

  private renderNoteHead(): void {
    clear(
      this.noteHead,
      h('h2', { class: 'note-title' }, this.note.name),
      h(
        'span',
        { class: `badge ${this.note.public ? 'public' : 'private'}` },
        this.note.public ? 'public' : 'private',
      ),
      this.isAdmin
        ? h(
            'button',
            {
              type: 'button',
              class: 'small',
              onclick: async () => {
                try {
                  this.note = await api<Note>('PATCH', `/api/notes/${this.note.id}`, {
                    public: !this.note.public,
                  });
                  this.renderNoteHead();
                } catch (error) {
                  toast(error);
                }
              },
            },
            this.note.public ? 'Make private' : 'Make public',
          )
        : null,
    );
  }

  private renderFiles(): void {
    const visible = this.files
      .filter((file) => !file.deleted_at)
      .sort((a, b) => a.name.localeCompare(b.name));
    clear(
      this.fileList,
      visible.length === 0 ? h('li', { class: 'muted empty' }, 'No files yet.') : null,
      visible.map((file) =>
        h(
          'li',
          { class: file.id === this.current?.id ? 'active' : '', 'data-file': file.name },
          h('a', { href: fileHref(this.note.name, file), onclick: () => this.showPane('editor') }, file.name),
          file.public
            ? null
            : h('span', { class: 'badge private', title: 'Not on the public page' }, 'private'),
          this.canEdit ? this.fileActions(file) : null,
        ),
      ),
    );
    for (const person of this.present) {
      if (person.file_id === null) continue;
      this.fileList
        .querySelector(`[data-file="${CSS.escape(this.fileName(person.file_id))}"]`)
        ?.classList.add('has-people');
    }
  }

  private fileName(id: number): string {
    return this.files.find((file) => file.id === id)?.name ?? '';
  }

  private fileActions(file: FileInfo): HTMLElement {
    const path = `/api/notes/${this.note.id}/files/${file.id}`;
    const run = (action: () => Promise<void>) => async () => {
      try {
        await action();
      } catch (error) {
        toast(error);
      }
    };
    return h(
      'span',
      { class: 'file-actions' },
      h(
        'button',
        {
          type: 'button',
          class: 'icon small',
          title: `Rename ${file.name}`,
          'aria-label': `Rename ${file.name}`,
          onclick: run(async () => {
            const name = prompt('New name', file.name)?.trim();
            if (!name || name === file.name) return;
            const renamed = await api<FileInfo>('PATCH', path, { name });
            this.upsertFile(renamed);
            if (this.current?.id === file.id)
              history.replaceState(null, '', fileHref(this.note.name, renamed));
          }),
        },
        '✎',
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'icon small',
          title: file.public ? 'Hide from the public page' : 'Show on the public page',
          'aria-label': `${file.public ? 'Hide' : 'Publish'} ${file.name}`,
          onclick: run(async () => {
            this.upsertFile(await api<FileInfo>('PATCH', path, { public: !file.public }));
          }),
        },
        file.public ? '◉' : '○',
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'icon small danger',
          title: `Delete ${file.name}`,
          'aria-label': `Delete ${file.name}`,
          onclick: run(async () => {
            if (!confirm(`Delete ${file.name}? It can be restored from "Deleted files".`)) return;
            await api('DELETE', path);
            this.removeFile(file.id);
          }),
        },
        '×',
      ),
    );
  }

  private async loadTrash(): Promise<void> {
    try {
      const { files } = await api<{ files: FileInfo[] }>('GET', `/api/notes/${this.note.id}/files?deleted=1`);
      clear(
        this.trashList,
        files.length === 0 ? h('li', { class: 'muted' }, 'Nothing deleted.') : null,
        files.map((file) =>
          h(
            'li',
            {},
            h('span', {}, file.name),
            h(
              'button',
              {
                type: 'button',
                class: 'small',
                onclick: async () => {
                  try {
                    this.upsertFile(
                      await api<FileInfo>('POST', `/api/notes/${this.note.id}/files/${file.id}/restore`),
                    );
                    await this.loadTrash();
                  } catch (error) {
                    toast(error);
                  }
                },
              },
              'Restore',
            ),
          ),
        ),
      );
    } catch (error) {
      toast(error);
    }
  }

  private upsertFile(file: FileInfo): void {
    const index = this.files.findIndex((each) => each.id === file.id);
    if (index >= 0) this.files[index] = { ...this.files[index], ...file };
    else this.files.push(file);
    if (this.current?.id === file.id) {
      this.current = { ...this.current, ...file };
      this.fileTitle.textContent = file.name;
    }
    this.renderFiles();
  }

  private removeFile(id: number): void {
    this.files = this.files.filter((file) => file.id !== id);
    this.renderFiles();
    if (this.current?.id === id) {
      toast('This file was deleted.', 'info');
      location.hash = fileHref(this.note.name);
    }
  }

  /** Opens a file by name (or the first one) in the editor, replacing the previous live session. */
  async openFile(fileName: string | null): Promise<void> {
    let file = fileName ? this.files.find((each) => each.name === fileName && !each.deleted_at) : undefined;
    if (!file && fileName) {
      toast(`No file named "${fileName}" in this note.`);
    }
    if (!file && !fileName) {
      const visible = this.files.filter((each) => !each.deleted_at);
      file = visible.find((each) => /^(index|readme)\.md$/i.test(each.name)) ?? visible[0];
      if (file) history.replaceState(null, '', fileHref(this.note.name, file));
    }
    this.collab?.close();
    this.collab = null;
    this.current = file ?? null;
    this.renderFiles();
    this.historyButton.disabled = !file;
    if (!file) {
      this.fileTitle.textContent = '';
      this.saveState.textContent = '';
      this.textarea.value = '';
      this.textarea.disabled = true;
      clear(
        this.preview,
        h('p', { class: 'muted' }, this.canEdit ? 'Create a file to start writing.' : 'No file to show.'),
      );
      void this.sendPresence(false);
      return;
    }
    this.textarea.disabled = false;
    this.fileTitle.textContent = file.name;
    this.saveState.textContent = `rev ${file.revision}`;
    setCrumbs(
      h('a', { href: '#/' }, 'notes'),
      h('a', { href: fileHref(this.note.name) }, this.note.name),
      h('span', {}, file.name),
    );
    document.title = `${file.name} · ${this.note.name} · rune notes`;
    this.textarea.value = '';
    const session = new CollabSession({
      note: String(this.note.id),
      fileId: file.id,
      clientId: this.session.clientId,
      textarea: this.textarea,
      readOnly: !this.canEdit,
      onChange: () => this.schedulePreview(),
      onLocalEdit: () => this.localEdit(),
      onError: (error) => toast(error),
    });
    this.collab = session;
    try {
      await session.sync();
    } catch (error) {
      toast(error);
    }
    this.textarea.dataset['ready'] = '1';
    void this.sendPresence(false);
  }

  private localEdit(): void {
    this.saveState.textContent = 'editing…';
    const now = Date.now();
    if (now - this.lastTypingSent > 2000) {
      this.lastTypingSent = now;
      void this.sendPresence(true);
    }
  }

  private async sendPresence(typing: boolean): Promise<void> {
    if (this.closed || this.session.role === 'anonymous') return;
    try {
      await api('POST', `/api/notes/${this.note.id}/presence`, {
        client_id: this.session.clientId,
        file_id: this.current?.id ?? null,
        typing,
      });
    } catch {
      // Presence is a courtesy; a failed update must not disturb editing.
    }
  }

  private schedulePreview(delay = 120): void {
    if (this.editorBody.classList.contains('mode-edit')) return;
    window.clearTimeout(this.previewTimer);
    this.previewTimer = window.setTimeout(() => {
      const text = this.collab ? this.collab.value() : this.textarea.value;
      void renderMarkdown(this.preview, text).catch((error) => toast(error));
    }, delay);
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
    if (this.files.some((file) => file.name === name)) {
      event.preventDefault();
      location.hash = fileHref(this.note.name, name);
    }
  }

  private async upload(files: File[]): Promise<void> {
    for (const file of files) {
      try {
        const result = await api<{ url: string; name: string; type: string }>(
          'POST',
          `/api/notes/${this.note.id}/uploads?name=${enc(file.name)}`,
          undefined,
          { raw: file, contentType: file.type },
        );
        const label = result.name.replace(/[[\]\\]/g, '');
        const markdown = SAFE_IMAGE.test(result.type)
          ? `![${label}](${result.url})`
          : `[${label}](${result.url})`;
        if (this.current && this.canEdit && !this.textarea.disabled) {
          const at = this.textarea.selectionEnd;
          this.textarea.setRangeText(`${markdown}\n`, at, at, 'end');
          this.textarea.dispatchEvent(new Event('input'));
        } else {
          toast(`Uploaded: ${result.url}`, 'info');
        }
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
      const key = person.name;
      const prev = others.get(key);
      // One chip per person; prefer the entry on this file and the one typing.
      if (
        !prev ||
        (person.file_id === this.current?.id && (prev.file_id !== this.current?.id || person.typing))
      ) {
        others.set(key, person);
      }
    }
    clear(
      this.presenceBar,
      [...others.values()].map((person) =>
        h(
          'span',
          {
            class: `who${person.file_id === this.current?.id ? ' here' : ''}${person.typing ? ' typing' : ''}`,
            title: `${person.name} (${person.role})${person.file_id ? ` in ${this.fileName(person.file_id)}` : ''}`,
          },
          person.name.slice(0, 2),
        ),
      ),
    );
    const typing = this.present.filter(
      (person) => person.typing && person.file_id === this.current?.id && person.client_id !== this.stampedId,
    );
    const names = [...new Set(typing.map((person) => person.name))];
    this.typingLine.textContent = names.length
      ? `${names.join(', ')} ${names.length === 1 ? 'is' : 'are'} typing…`
      : '';
    this.renderFiles();
  }

  private async resync(): Promise<void> {
    try {
      const { note, files } = await api<{ note: Note; files: FileInfo[] }>(
        'GET',
        `/api/notes/${this.note.id}`,
      );
      this.note = note;
      this.files = files;
      this.renderNoteHead();
      this.renderFiles();
      await Promise.all([this.collab?.sync(), this.chat.load()]);
      void this.sendPresence(false);
    } catch (error) {
      toast(error);
    }
  }

  private onEvent(name: string, data: Record<string, unknown>): void {
    if (this.closed) return;
    const fileId = data['file_id'] as number | undefined;
    switch (name) {
      case 'hello':
        this.stampedId = typeof data['client_id'] === 'string' ? data['client_id'] : null;
        void this.sendPresence(false);
        break;
      case 'note.updated': {
        const note = data['note'] as Note;
        if (note.id !== this.note.id) break;
        const renamed = note.name !== this.note.name;
        this.note = note;
        this.noteName = note.name;
        this.chat.setNote(note);
        this.renderNoteHead();
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
        this.upsertFile(data['file'] as FileInfo);
        break;
      case 'file.deleted':
        if (typeof fileId === 'number') this.removeFile(fileId);
        break;
      case 'file.saved':
        if (this.current && fileId === this.current.id) {
          this.current.revision = Number(data['revision']);
          this.saveState.textContent = `saved · rev ${data['revision']}`;
        }
        break;
      case 'collab.update':
        // Our own updates come back too (harmless: Yjs applies an update once); skip them.
        if (this.collab && fileId === this.current?.id && data['client_id'] !== this.stampedId) {
          this.collab.applyRemote(String(data['update']), String(data['client_id']));
        }
        break;
      case 'collab.reset':
        if (fileId === this.current?.id) void this.openFile(this.current?.name ?? null);
        break;
      case 'presence':
        this.present = (data['present'] as Presence[]) ?? [];
        this.renderPresence();
        break;
      case 'presence.changed': {
        // Only what changed since the last one: entries that joined or changed, ids that left.
        const set = (data['set'] as Presence[]) ?? [];
        const gone = new Set([...((data['gone'] as string[]) ?? []), ...set.map((p) => p.client_id)]);
        this.present = [...this.present.filter((p) => !gone.has(p.client_id)), ...set];
        this.renderPresence();
        break;
      }
      default:
        if (name.startsWith('chat.') || name.startsWith('approval.')) this.chat.handle(name, data);
    }
  }
}
