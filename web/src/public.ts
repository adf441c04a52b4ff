// Public pages (/notes/, /notes/{note}/, /notes/{note}/{file}): the server embeds the page's data
// as JSON in <script type="application/json" id="rune-data">; this script renders it with the same
// sanitising renderer as the app.
import { enc, type FileInfo, type Note } from './api.ts';
import { ago, clear, h } from './dom.ts';
import { renderMarkdown } from './render.ts';
import { initTheme, themeButton } from './theme.ts';

type PageData =
  | { kind: 'index'; notes: Note[] }
  | { kind: 'note'; note: Note; files: FileInfo[] }
  | { kind: 'file'; note: Note; file: FileInfo };

function readData(): PageData | null {
  const text = document.getElementById('rune-data')?.textContent;
  if (!text) return null;
  try {
    return JSON.parse(text) as PageData;
  } catch {
    return null;
  }
}

const noteHref = (note: Note) => `/notes/${enc(note.name)}/`;
const fileHref = (note: Note, file: FileInfo) => `/notes/${enc(note.name)}/${enc(file.name)}`;

async function render(): Promise<void> {
  initTheme();
  const main = document.getElementById('page') ?? document.body.appendChild(h('main', { id: 'page' }));
  const data = readData();
  const crumbs: (Node | string)[] = [h('a', { href: '/notes/' }, 'notes')];
  if (!data) {
    clear(main, h('p', { class: 'error' }, 'This page has no content.'));
  } else if (data.kind === 'index') {
    document.title = 'Public notes · rune notes';
    clear(
      main,
      h('h1', {}, 'Public notes'),
      data.notes.length === 0
        ? h('p', { class: 'muted' }, 'Nothing is public yet.')
        : h(
            'ul',
            { class: 'note-list' },
            data.notes.map((note) =>
              h(
                'li',
                {},
                h('a', { href: noteHref(note), class: 'note-name' }, note.name),
                h('span', { class: 'muted when' }, ago(note.updated_at)),
              ),
            ),
          ),
    );
  } else if (data.kind === 'note') {
    document.title = `${data.note.name} · rune notes`;
    crumbs.push(h('span', {}, data.note.name));
    clear(
      main,
      h('h1', {}, data.note.name),
      data.files.length === 0
        ? h('p', { class: 'muted' }, 'No public files in this note.')
        : h(
            'ul',
            { class: 'note-list' },
            data.files.map((file) =>
              h(
                'li',
                {},
                h('a', { href: fileHref(data.note, file), class: 'note-name' }, file.name),
                h('span', { class: 'muted when' }, ago(file.updated_at)),
              ),
            ),
          ),
    );
  } else {
    document.title = `${data.file.name} · ${data.note.name} · rune notes`;
    crumbs.push(h('a', { href: noteHref(data.note) }, data.note.name), h('span', {}, data.file.name));
    const article = h('article', { class: 'markdown public-file' });
    clear(
      main,
      article,
      h(
        'footer',
        { class: 'muted page-foot' },
        `Revision ${data.file.revision}, updated ${ago(data.file.updated_at)} · `,
        h('a', { href: `/raw/${enc(data.note.name)}/${enc(data.file.name)}` }, 'raw'),
      ),
    );
    await renderMarkdown(article, data.file.content ?? '');
  }
  const bar = document.getElementById('topbar');
  if (bar) {
    clear(
      bar,
      h('a', { href: '/notes/', class: 'brand' }, 'rune notes'),
      h(
        'span',
        { class: 'crumbs' },
        crumbs.flatMap((part, i) => (i === 0 ? [part] : [h('span', { class: 'sep' }, '/'), part])),
      ),
      h('span', { class: 'spacer' }),
      themeButton(),
      h('a', { href: '/', class: 'button' }, 'Open the app'),
    );
  }
  document.body.dataset['ready'] = '1';
}

void render();
