// The files side of a note's workspace: the note's name and visibility, the search box, the file
// list (who is in which file, rename, publish, delete), new files, uploads and deleted files.
import { call, enc, type FileInfo, type Note, type Presence } from './api.ts';
import { clear, h } from './dom.ts';
import { openSearch } from './search.ts';
import { fileHref } from './shell.ts';
import { toast } from './toast.ts';

export interface FilesPaneHost {
  readonly canEdit: boolean;
  readonly isAdmin: boolean;
  note(): Note;
  setNote(note: Note): void;
  /** The file open in the editor, if any. */
  currentId(): number | null;
  /** A file link was followed (phones switch to the editor pane). */
  opened(): void;
  /** A file was renamed or its flags changed. */
  changed(file: FileInfo): void;
  /** A file was deleted (by anyone). */
  removed(id: number): void;
  upload(files: File[]): void;
}

export class FilesPane {
  files: FileInfo[] = [];
  readonly element: HTMLElement;
  private readonly noteHead = h('header', { class: 'pane-head note-head' });
  private readonly list = h('ul', { class: 'file-list' });
  private readonly trash = h('ul', { class: 'file-list trash' });
  private present: Presence[] = [];

  constructor(
    private readonly host: FilesPaneHost,
    files: FileInfo[],
  ) {
    this.files = files;
    this.element = this.build();
    this.renderHead();
    this.render();
  }

  fileName(id: number): string {
    return this.files.find((file) => file.id === id)?.name ?? '';
  }

  setPresent(present: Presence[]): void {
    this.present = present;
    this.render();
  }

  setFiles(files: FileInfo[]): void {
    this.files = files;
    this.renderHead();
    this.render();
  }

  upsert(file: FileInfo): void {
    const index = this.files.findIndex((each) => each.id === file.id);
    if (index >= 0) this.files[index] = { ...this.files[index], ...file };
    else this.files.push(file);
    this.host.changed(this.files.find((each) => each.id === file.id)!);
    this.render();
  }

  remove(id: number): void {
    this.files = this.files.filter((file) => file.id !== id);
    this.render();
    this.host.removed(id);
  }

  renderHead(): void {
    const note = this.host.note();
    clear(
      this.noteHead,
      h('h2', { class: 'note-title' }, note.name),
      h('span', { class: `badge ${note.public ? 'public' : 'private'}` }, note.public ? 'public' : 'private'),
      this.host.isAdmin
        ? h(
            'button',
            {
              type: 'button',
              class: 'small',
              onclick: async () => {
                try {
                  this.host.setNote(
                    await call(
                      'PATCH /api/notes/:note',
                      { note: this.host.note().id },
                      { public: !note.public },
                    ),
                  );
                  this.renderHead();
                } catch (error) {
                  toast(error);
                }
              },
            },
            note.public ? 'Make private' : 'Make public',
          )
        : null,
    );
  }

  render(): void {
    const note = this.host.note();
    const visible = this.files
      .filter((file) => !file.deleted_at)
      .sort((a, b) => a.name.localeCompare(b.name));
    clear(
      this.list,
      visible.length === 0 ? h('li', { class: 'muted empty' }, 'No files yet.') : null,
      visible.map((file) =>
        h(
          'li',
          { class: file.id === this.host.currentId() ? 'active' : '', 'data-file': file.name },
          h('a', { href: fileHref(note.name, file), onclick: () => this.host.opened() }, file.name),
          file.public
            ? null
            : h('span', { class: 'badge private', title: 'Not on the public page' }, 'private'),
          this.host.canEdit ? this.actions(file) : null,
        ),
      ),
    );
    for (const person of this.present) {
      if (person.file_id === null) continue;
      this.list
        .querySelector(`[data-file="${CSS.escape(this.fileName(person.file_id))}"]`)
        ?.classList.add('has-people');
    }
  }

  private build(): HTMLElement {
    const note = () => this.host.note();
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
      this.host.upload([...(uploadInput.files ?? [])]);
      uploadInput.value = '';
    });
    const search = h('input', {
      type: 'search',
      placeholder: 'Search this note',
      'aria-label': 'Search this note',
    });
    search.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && search.value.trim())
        void openSearch(search.value.trim(), String(note().id));
    });
    const canEdit = this.host.canEdit;
    return h(
      'aside',
      { class: 'files', 'aria-label': 'Files' },
      this.noteHead,
      search,
      this.list,
      canEdit
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
                  const file = await call(
                    'POST /api/notes/:note/files',
                    { note: note().id },
                    {
                      name,
                      content: '',
                    },
                  );
                  newName.value = '';
                  this.upsert(file);
                  location.hash = fileHref(note().name, file);
                } catch (error) {
                  toast(error);
                }
              },
            },
            newName,
            h('button', { type: 'submit', class: 'small primary', title: 'Create file' }, '+ File'),
          )
        : null,
      canEdit ? h('label', { class: 'button small upload' }, uploadInput, 'Upload…') : null,
      canEdit
        ? h(
            'details',
            {
              class: 'trash',
              ontoggle: (event: Event) => {
                if ((event.target as HTMLDetailsElement).open) void this.loadTrash();
              },
            },
            h('summary', {}, 'Deleted files'),
            this.trash,
          )
        : null,
      h(
        'p',
        { class: 'note-links' },
        h('a', { href: `/api/notes/${note().id}/export?format=zip`, download: '' }, 'Export .zip'),
        note().public
          ? [
              ' · ',
              h(
                'a',
                { href: `/notes/${enc(note().name)}/`, target: '_blank', rel: 'noopener' },
                'Public page',
              ),
            ]
          : null,
      ),
    );
  }

  private actions(file: FileInfo): HTMLElement {
    const at = { note: this.host.note().id, file: file.id };
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
            this.upsert(await call('PATCH /api/notes/:note/files/:file', at, { name }));
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
            this.upsert(await call('PATCH /api/notes/:note/files/:file', at, { public: !file.public }));
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
            await call('DELETE /api/notes/:note/files/:file', at);
            this.remove(file.id);
          }),
        },
        '×',
      ),
    );
  }

  private async loadTrash(): Promise<void> {
    const noteId = this.host.note().id;
    try {
      const { files } = await call('GET /api/notes/:note/files', { note: noteId }, undefined, '?deleted=1');
      clear(
        this.trash,
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
                    this.upsert(
                      await call('POST /api/notes/:note/files/:file/restore', {
                        note: noteId,
                        file: file.id,
                      }),
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
}
