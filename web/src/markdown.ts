// The Markdown dialect of rune notes, without the DOM: marked with GFM, `$…$`/`$$…$$` math
// placeholders and highlight.js for fenced code. render.ts sanitises what it produces; the live
// preview (preview.ts) lexes block by block with the document's link definitions.
import hljs from 'highlight.js/lib/core';
import { Lexer, Marked, type MarkedExtension, type Tokens } from 'marked';
import { registerLanguages } from '../../src/core/hljs-languages.js';

registerLanguages(hljs);

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
}

/** `$x$` inline and `$$…$$` display math become placeholders that KaTeX fills in later. */
const math: MarkedExtension = {
  extensions: [
    {
      name: 'mathBlock',
      level: 'block',
      start: (src) => src.match(/^\$\$/m)?.index,
      tokenizer(src) {
        const match = /^\$\$([\s\S]+?)\$\$[ \t]*(?:\n|$)/.exec(src);
        if (match) return { type: 'mathBlock', raw: match[0], text: match[1]!.trim() };
        return undefined;
      },
      renderer: (token) => `<div class="math math-display">${escapeHtml(token.text as string)}</div>\n`,
    },
    {
      name: 'mathInline',
      level: 'inline',
      start: (src) => src.indexOf('$'),
      tokenizer(src) {
        const match = /^\$(?!\s)((?:\\\$|[^$\n])+?)(?<!\s)\$(?!\d)/.exec(src);
        if (match) return { type: 'mathInline', raw: match[0], text: match[1]! };
        return undefined;
      },
      renderer: (token) => `<span class="math math-inline">${escapeHtml(token.text as string)}</span>`,
    },
  ],
};

export const marked = new Marked(math, {
  gfm: true,
  renderer: {
    code({ text, lang }: Tokens.Code) {
      const language = (lang ?? '').trim().split(/\s+/)[0]?.toLowerCase() ?? '';
      if (language === 'mermaid') return `<pre class="mermaid-src">${escapeHtml(text)}</pre>\n`;
      if (language && hljs.getLanguage(language)) {
        const { value } = hljs.highlight(text, { language, ignoreIllegals: true });
        return `<pre><code class="hljs language-${escapeHtml(language)}">${value}</code></pre>\n`;
      }
      return `<pre><code class="hljs">${escapeHtml(text)}</code></pre>\n`;
    },
  },
});

export type Links = Record<string, { href: string | null; title?: string | null }>;

/**
 * Lexes one block of a document. `links` are the link definitions of the whole document (a
 * reference may point to a definition in another block); the block's own definitions are added
 * to them by marked. Returns the tokens and every definition the lexer knew at the end.
 */
export function lexBlock(text: string, links: Links = {}): { tokens: Tokens.Generic[]; links: Links } {
  const lexer = new Lexer(marked.defaults);
  Object.assign(lexer.tokens.links, links);
  const tokens = lexer.lex(text);
  return { tokens, links: tokens.links as Links };
}

/** HTML of tokens from `lexBlock` (not sanitised: render.ts's `sanitize` is the way to the page). */
export function blockHtml(tokens: Tokens.Generic[]): string {
  return marked.parser(tokens as Parameters<typeof marked.parser>[0]);
}
