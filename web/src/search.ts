// Full-text search across what the caller may see; snippets are plain-text segments from the
// server, shown as text with <mark> around the matches (never parsed as HTML).
import { call, enc, type SearchResult } from './api.ts';
import { clear, h } from './dom.ts';
import { fileHref } from './shell.ts';
import { toast } from './toast.ts';

export function snippetNode(snippet: SearchResult['snippet']): HTMLElement {
  return h(
    'p',
    { class: 'snippet' },
    snippet.map((part) => (part.match ? h('mark', {}, part.text) : part.text)),
  );
}

export async function openSearch(query: string, note?: string): Promise<void> {
  document.querySelector('.search-panel')?.remove();
  const list = h('ol', { class: 'results' }, h('li', { class: 'muted' }, 'Searching…'));
  const panel = h(
    'div',
    { class: 'overlay search-panel', role: 'dialog', 'aria-label': 'Search results' },
    h(
      'section',
      { class: 'card panel' },
      h(
        'header',
        { class: 'panel-head' },
        h('h2', {}, 'Search: ', h('q', {}, query)),
        h(
          'button',
          { type: 'button', class: 'icon', 'aria-label': 'Close', onclick: () => panel.remove() },
          '✕',
        ),
      ),
      list,
    ),
  );
  panel.addEventListener('click', (event) => {
    if (event.target === panel) panel.remove();
  });
  document.body.append(panel);
  try {
    const params = `q=${enc(query)}${note ? `&note=${enc(note)}` : ''}&limit=30`;
    const { results } = await call('GET /api/search', {}, undefined, `?${params}`);
    clear(
      list,
      results.length === 0
        ? h('li', { class: 'muted' }, 'Nothing found.')
        : results.map((result) =>
            h(
              'li',
              {},
              h(
                'a',
                {
                  href:
                    result.kind === 'file'
                      ? fileHref(result.note, result.file ?? null)
                      : fileHref(result.note),
                  onclick: () => panel.remove(),
                },
                h('span', { class: `badge kind-${result.kind}` }, result.kind),
                ' ',
                result.note,
                result.file ? ` / ${result.file}` : '',
              ),
              snippetNode(result.snippet),
            ),
          ),
    );
  } catch (error) {
    clear(list, h('li', { class: 'error' }, error instanceof Error ? error.message : String(error)));
    toast(error);
  }
}
