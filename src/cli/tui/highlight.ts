// Syntax highlighting of fenced code for the terminal: highlight.js (hljs.js: the languages the
// notes app highlights, plus C, C++ and Java) turned from its HTML into rune's colours.
import { hljs } from './hljs.js';

/** SGR colour (open code) of a highlight.js scope; its close code is 39 (or 22 for dim/bold). */
const SCOPE_COLOUR: Record<string, string> = {
  keyword: '35',
  built_in: '36',
  type: '36',
  literal: '33',
  number: '33',
  string: '32',
  regexp: '31',
  symbol: '33',
  subst: '39',
  comment: '2',
  doctag: '2',
  meta: '2',
  title: '34',
  'title.function': '34',
  'title.class': '36',
  name: '34',
  tag: '34',
  attr: '33',
  attribute: '33',
  variable: '39',
  'template-variable': '33',
  section: '1',
  bullet: '33',
  addition: '32',
  deletion: '31',
  selector: '35',
  'selector-tag': '35',
  property: '36',
};

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#x27': "'", '#39': "'" };

/** highlight.js's HTML as text with SGR colours: each span opens its colour, its end restores the outer one. */
export function htmlToAnsi(html: string): string {
  const stack: string[] = [];
  const reset = (): string => `\x1b[0m${stack.length > 0 ? `\x1b[${stack.at(-1)}m` : ''}`;
  return html.replace(
    /<span class="([^"]*)">|<\/span>|&(#?\w+);/g,
    (match, classes?: string, entity?: string) => {
      if (entity !== undefined) return ENTITIES[entity] ?? match;
      if (classes !== undefined) {
        const scope = classes
          .split(' ')
          .map((name) => name.replace(/^hljs-/, '').replace(/_+$/, ''))
          .find(
            (name) => SCOPE_COLOUR[name] !== undefined || SCOPE_COLOUR[name.split('.')[0]!] !== undefined,
          );
        const colour = scope
          ? (SCOPE_COLOUR[scope] ?? SCOPE_COLOUR[scope.split('.')[0]!]!)
          : (stack.at(-1) ?? '39');
        stack.push(colour);
        return `\x1b[${colour}m`;
      }
      stack.pop();
      return reset();
    },
  );
}

/** The code's lines highlighted for `language` (a fence's info word); undefined for an unknown language. */
export function highlightCode(code: string, language: string): string[] | undefined {
  const name = language.trim().split(/\s+/)[0]?.toLowerCase() ?? '';
  if (!name || !hljs.getLanguage(name)) return undefined;
  const html = hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
  // A colour never runs over a line's end: each line is closed and the next one reopens it.
  const lines: string[] = [];
  let open = '';
  for (const line of htmlToAnsi(html).split('\n')) {
    lines.push(`${open}${line}\x1b[0m`);
    const codes = [...line.matchAll(/\x1b\[([0-9;]*)m/g)];
    const last = codes.at(-1)?.[1];
    if (last !== undefined) open = last === '0' ? '' : `\x1b[${last}m`;
  }
  return lines;
}
