// The notes app at `/`: log-in, notes list, and a note's workspace (file list, collaborative
// editor with live preview, chat with the agent, presence, revisions, search, uploads). The
// workspace is loaded on demand (note-view.ts and editor.ts are separate chunks).
// Plain DOM, no framework; every piece of user text goes in as text or through render.ts.
import { ApiError, call, enc, type Note, rank, setCsrfToken } from './api.ts';
import { $, ago, clear, h } from './dom.ts';
import { EventStream } from './events.ts';
import type { NoteView } from './note-view.ts';
import { openSearch } from './search.ts';
import { type Session, setCrumbs } from './shell.ts';
import { initTheme, themeButton } from './theme.ts';
import { toast } from './toast.ts';
import { tokensView } from './tokens.ts';

const session: Session = {
  user: null,
  role: 'anonymous',
  clientId: crypto.getRandomValues(new Uint32Array(2)).join('-'),
};

let teardown: (() => void) | null = null;

async function loadMe(): Promise<void> {
  const me = await call('GET /api/me', {});
  session.user = me.user;
  session.role = me.role;
  setCsrfToken(me.csrf_token);
  renderTopbar();
}

function renderTopbar(): void {
  const bar = $('#topbar');
  const search = h('input', {
    type: 'search',
    placeholder: 'Search…',
    'aria-label': 'Search notes and chats',
    class: 'search-box',
    onkeydown: (event: Event) => {
      const key = event as KeyboardEvent;
      if (key.key === 'Enter' && search.value.trim()) openSearch(search.value.trim());
    },
  });
  clear(
    bar,
    h('a', { href: '#/', class: 'brand' }, 'rune notes'),
    h('span', { id: 'crumbs', class: 'crumbs' }),
    h('span', { class: 'spacer' }),
    search,
    themeButton(),
    session.user
      ? h(
          'span',
          { class: 'me' },
          h(
            'span',
            { class: 'me-name', title: `${session.user.role} (${session.user.provider})` },
            session.user.name,
          ),
          h('span', { class: `badge role-${session.role}` }, session.role),
          h('button', { type: 'button', class: 'link', onclick: () => void logout() }, 'Log out'),
        )
      : h('a', { href: '#/login', class: 'button' }, 'Log in'),
  );
}

async function logout(): Promise<void> {
  try {
    await call('POST /auth/logout', {});
  } catch (error) {
    toast(error);
  }
  await loadMe();
  location.hash = '#/login';
}

function loginView(view: HTMLElement): void {
  setCrumbs('log in');
  const error = h('p', { class: 'error', role: 'alert' });
  const username = h('input', {
    name: 'username',
    autocomplete: 'username',
    required: true,
    autofocus: true,
  });
  const password = h('input', {
    name: 'password',
    type: 'password',
    autocomplete: 'current-password',
    required: true,
  });
  const providers = h('div', { class: 'providers' });
  const form = h(
    'form',
    {
      class: 'card login',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        error.textContent = '';
        try {
          const result = await call(
            'POST /auth/local',
            {},
            {
              username: username.value,
              password: password.value,
            },
          );
          setCsrfToken(result.csrf_token);
          await loadMe();
          location.hash = '#/';
        } catch (caught) {
          error.textContent =
            caught instanceof ApiError && caught.code === 'UNAUTHENTICATED'
              ? 'Wrong name or password.'
              : caught instanceof Error
                ? caught.message
                : String(caught);
        }
      },
    },
    h('h1', {}, 'Log in'),
    h('label', {}, 'Name', username),
    h('label', {}, 'Password', password),
    h('button', { type: 'submit', class: 'primary' }, 'Log in'),
    error,
    providers,
    h(
      'p',
      { class: 'muted' },
      h('a', { href: '#/' }, 'Continue without an account'),
      ' to read public notes.',
    ),
  );
  clear(view, form);
  call('GET /auth/providers', {})
    .then((list) => {
      for (const provider of list.oauth) {
        providers.append(h('a', { class: 'button', href: provider.url }, `Log in with ${provider.name}`));
      }
      if (list.github) providers.append(h('a', { class: 'button', href: list.github }, 'Log in with GitHub'));
    })
    .catch(() => {});
}

async function homeView(view: HTMLElement): Promise<() => void> {
  setCrumbs('notes');
  const trash = location.hash === '#/trash';
  const list = h('ul', { class: 'note-list' });
  const isAdmin = session.role === 'admin';
  const load = async () => {
    const { notes } = await call('GET /api/notes', {}, undefined, trash ? '?deleted=1' : '');
    clear(
      list,
      notes.length === 0
        ? h('li', { class: 'muted empty' }, trash ? 'The trash is empty.' : 'No notes yet.')
        : notes.map((note) => noteItem(note, trash, load)),
    );
  };
  const name = h('input', { name: 'name', placeholder: 'New note name', required: true, maxlength: 120 });
  const isPublic = h('input', { type: 'checkbox', name: 'public' });
  clear(
    view,
    h(
      'section',
      { class: 'home' },
      h(
        'div',
        { class: 'home-head' },
        h('h1', {}, trash ? 'Trash' : 'Notes'),
        isAdmin
          ? h(
              'span',
              { class: 'actions' },
              h('a', { href: '#/tokens', class: 'link' }, 'Tokens'),
              h('a', { href: trash ? '#/' : '#/trash', class: 'link' }, trash ? '← Notes' : 'Trash'),
            )
          : null,
      ),
      isAdmin && !trash
        ? h(
            'form',
            {
              class: 'inline-form',
              onsubmit: async (event: Event) => {
                event.preventDefault();
                try {
                  const note = await call(
                    'POST /api/notes',
                    {},
                    {
                      name: name.value.trim(),
                      public: isPublic.checked,
                    },
                  );
                  name.value = '';
                  location.hash = `#/n/${enc(note.name)}`;
                } catch (error) {
                  toast(error);
                }
              },
            },
            name,
            h('label', { class: 'check' }, isPublic, 'public'),
            h('button', { type: 'submit', class: 'primary' }, 'Create note'),
          )
        : null,
      session.role === 'anonymous'
        ? h(
            'p',
            { class: 'muted' },
            'You see the public notes. ',
            h('a', { href: '#/login' }, 'Log in'),
            ' to see more.',
          )
        : null,
      list,
    ),
  );
  await load();
  const stream = new EventStream(
    null,
    session.clientId,
    (_data, name) => {
      if (name.startsWith('note.')) void load().catch(toast);
    },
    () => {},
    () => void load().catch(toast),
  );
  return () => stream.close();
}

function noteItem(note: Note, trash: boolean, reload: () => Promise<void>): HTMLElement {
  const isAdmin = session.role === 'admin';
  const act = (label: string, run: () => Promise<unknown>) =>
    h(
      'button',
      {
        type: 'button',
        class: 'small',
        onclick: async () => {
          try {
            await run();
            await reload();
          } catch (error) {
            toast(error);
          }
        },
      },
      label,
    );
  return h(
    'li',
    { 'data-note': note.name },
    trash
      ? h('span', { class: 'note-name' }, note.name)
      : h('a', { href: `#/n/${enc(note.name)}`, class: 'note-name' }, note.name),
    note.public
      ? h('span', { class: 'badge public' }, 'public')
      : h('span', { class: 'badge private' }, 'private'),
    h('span', { class: 'muted when' }, ago(note.updated_at)),
    isAdmin && !trash
      ? h(
          'span',
          { class: 'actions' },
          act(note.public ? 'Make private' : 'Make public', () =>
            call('PATCH /api/notes/:note', { note: note.id }, { public: !note.public }),
          ),
          act('Rename', async () => {
            const name = prompt('New name of the note', note.name);
            if (name && name !== note.name) await call('PATCH /api/notes/:note', { note: note.id }, { name });
          }),
          act('Delete', async () => {
            if (confirm(`Move the note "${note.name}" to the trash?`))
              await call('DELETE /api/notes/:note', { note: note.id });
          }),
        )
      : null,
    isAdmin && trash
      ? h(
          'span',
          { class: 'actions' },
          act('Restore', () => call('POST /api/notes/:note/restore', { note: note.id })),
          act('Delete for good', async () => {
            if (confirm(`Delete "${note.name}" and all its files for good?`))
              await call('DELETE /api/notes/:note', { note: note.id }, undefined, '?purge=1');
          }),
        )
      : null,
  );
}

/** `#/n/<note>[/<file>]`, segments URL-encoded. */
function parseRoute(): { name: 'login' | 'home' | 'note' | 'tokens'; note?: string; file?: string } {
  const hash = location.hash.replace(/^#/, '');
  if (hash === '/login') return { name: 'login' };
  if (hash === '/tokens') return { name: 'tokens' };
  const match = /^\/n\/([^/]+)(?:\/([^/]+))?\/?$/.exec(hash);
  if (match) {
    try {
      return {
        name: 'note',
        note: decodeURIComponent(match[1]!),
        ...(match[2] ? { file: decodeURIComponent(match[2]) } : {}),
      };
    } catch {
      return { name: 'home' };
    }
  }
  return { name: 'home' };
}

let currentNoteView: NoteView | null = null;

async function route(): Promise<void> {
  const view = $('#view');
  const next = parseRoute();
  // Moving between files of the open note keeps its stream, chat and presence.
  if (next.name === 'note' && currentNoteView && currentNoteView.noteName === next.note) {
    await currentNoteView.openFile(next.file ?? null);
    return;
  }
  teardown?.();
  teardown = null;
  currentNoteView = null;
  document.body.dataset['view'] = next.name;
  try {
    if (next.name === 'login') {
      loginView(view);
    } else if (next.name === 'tokens') {
      await tokensView(view, session);
    } else if (next.name === 'note') {
      // The note page and (for editors) CodeMirror are chunks of their own: the list and the
      // log-in page never load them. Both start loading now, side by side.
      const editor = rank[session.role] >= rank.user ? import('./editor.ts') : undefined;
      editor?.catch(() => {});
      const { NoteView } = await import('./note-view.ts');
      const noteView = new NoteView(view, next.note!, session, editor);
      currentNoteView = noteView;
      teardown = () => noteView.close();
      await noteView.load(next.file ?? null);
    } else {
      teardown = await homeView(view);
    }
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      clear(
        view,
        h('section', { class: 'card' }, h('h1', {}, 'Not found'), h('p', {}, error.message), notFoundHint()),
      );
    } else {
      clear(
        view,
        h(
          'section',
          { class: 'card' },
          h('h1', {}, 'Something went wrong'),
          h('p', { class: 'error' }, String(error)),
        ),
      );
    }
  }
}

function notFoundHint(): HTMLElement {
  return rank[session.role] < rank.user
    ? h('p', {}, h('a', { href: '#/login' }, 'Log in'), ' if this note is not public.')
    : h('p', {}, h('a', { href: '#/' }, 'Back to the notes'));
}

async function start(): Promise<void> {
  initTheme();
  try {
    await loadMe();
  } catch (error) {
    toast(error);
  }
  window.addEventListener('hashchange', () => void route());
  await route();
  document.body.dataset['ready'] = '1';
}

void start();
