// A file's revisions: list, view (rendered or source), unified diff against the previous one,
// and restore (which the server records as a new revision).
import { call, type FileInfo, type Revision, rank } from './api.ts';
import { ago, clear, h } from './dom.ts';
import { renderMarkdown } from './render.ts';
import type { Session } from './shell.ts';
import { toast } from './toast.ts';

export async function openHistory(noteId: number, file: FileInfo, session: Session): Promise<void> {
  document.querySelector('.history-panel')?.remove();
  const at = (rev: number) => ({ note: noteId, file: file.id, rev });
  const list = h('ol', { class: 'revisions' });
  const detail = h('div', { class: 'revision-detail' }, h('p', { class: 'muted' }, 'Pick a revision.'));
  const close = () => panel.remove();
  const panel = h(
    'div',
    { class: 'overlay history-panel', role: 'dialog', 'aria-label': `History of ${file.name}` },
    h(
      'section',
      { class: 'card panel wide' },
      h(
        'header',
        { class: 'panel-head' },
        h('h2', {}, 'History of ', h('q', {}, file.name)),
        h('button', { type: 'button', class: 'icon', 'aria-label': 'Close', onclick: close }, '✕'),
      ),
      h('div', { class: 'history-body' }, list, detail),
    ),
  );
  panel.addEventListener('click', (event) => {
    if (event.target === panel) close();
  });
  panel.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') close();
  });
  document.body.append(panel);

  const show = async (revision: Revision, mode: 'view' | 'source' | 'diff') => {
    for (const item of list.querySelectorAll('li')) {
      item.classList.toggle('active', item.dataset['rev'] === String(revision.revision));
    }
    const tabs = h(
      'div',
      { class: 'tabs' },
      (['view', 'source', 'diff'] as const).map((tab) =>
        h(
          'button',
          {
            type: 'button',
            class: tab === mode ? 'tab active' : 'tab',
            onclick: () => void show(revision, tab),
          },
          tab === 'view' ? 'Rendered' : tab === 'source' ? 'Source' : 'Diff',
        ),
      ),
      rank[session.role] >= rank.user
        ? h(
            'button',
            {
              type: 'button',
              class: 'primary restore',
              onclick: async () => {
                if (!confirm(`Restore revision ${revision.revision} of ${file.name}?`)) return;
                try {
                  await call(
                    'POST /api/notes/:note/files/:file/revisions/:rev/restore',
                    at(revision.revision),
                  );
                  toast(`Restored revision ${revision.revision}`, 'info');
                  close();
                } catch (error) {
                  toast(error);
                }
              },
            },
            'Restore this revision',
          )
        : null,
    );
    const body = h('div', { class: 'revision-body' }, h('p', { class: 'muted' }, 'Loading…'));
    clear(detail, tabs, body);
    try {
      if (mode === 'diff') {
        const result = await call(
          'GET /api/notes/:note/files/:file/revisions/:rev/diff',
          at(revision.revision),
        );
        clear(
          body,
          h('p', { class: 'muted' }, `Changes from revision ${result.from} to ${result.to}`),
          // Past the server's budget there is no diff, only why.
          result.diff === null
            ? h('p', { class: 'muted' }, result.message ?? 'Too large to diff.')
            : diffView(result.diff),
        );
      } else {
        const full = await call('GET /api/notes/:note/files/:file/revisions/:rev', at(revision.revision));
        if (mode === 'source') clear(body, h('pre', { class: 'source' }, full.content ?? ''));
        else {
          const rendered = h('div', { class: 'markdown' });
          clear(body, rendered);
          await renderMarkdown(rendered, full.content ?? '');
        }
      }
    } catch (error) {
      clear(body, h('p', { class: 'error' }, error instanceof Error ? error.message : String(error)));
    }
  };

  try {
    const { revisions } = await call('GET /api/notes/:note/files/:file/revisions', {
      note: noteId,
      file: file.id,
    });
    clear(
      list,
      revisions.map((revision) =>
        h(
          'li',
          { 'data-rev': revision.revision },
          h(
            'button',
            { type: 'button', class: 'link', onclick: () => void show(revision, 'view') },
            h('strong', {}, `#${revision.revision}`),
            ' ',
            revision.author ?? '',
            ' ',
            h('span', { class: 'muted' }, ago(revision.created_at), ` · ${revision.size} B`),
          ),
        ),
      ),
    );
    if (revisions[0]) await show(revisions[0], 'view');
  } catch (error) {
    clear(list, h('li', { class: 'error' }, error instanceof Error ? error.message : String(error)));
  }
}

/** A unified diff as lines coloured by their first character, all as text. */
export function diffView(diff: string): HTMLElement {
  return h(
    'pre',
    { class: 'diff' },
    diff.split('\n').map((line) => {
      const kind =
        line.startsWith('+++') || line.startsWith('---')
          ? 'head'
          : line.startsWith('@@')
            ? 'hunk'
            : line.startsWith('+')
              ? 'add'
              : line.startsWith('-')
                ? 'del'
                : 'ctx';
      return h('span', { class: `diff-${kind}` }, `${line}\n`);
    }),
  );
}
