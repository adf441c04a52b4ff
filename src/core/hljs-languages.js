// The languages highlight.js knows in rune's two renderers of Markdown: the terminal's
// (src/cli/tui/hljs.js) and the notes page's (web/src/markdown.ts). Registering only these keeps
// both bundles small (highlight.js/lib/core has none). Plain JavaScript with its types in
// hljs-languages.d.ts: highlight.js's own types reference the DOM library, which would change
// Node's types for the whole project if TypeScript resolved them.
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

const LANGUAGES = {
  bash,
  css,
  diff,
  go,
  javascript,
  json,
  markdown,
  python,
  rust,
  sql,
  typescript,
  xml,
  yaml,
};

/** Other names a fence may give, by the language they mean. */
const ALIASES = {
  bash: ['sh', 'shell', 'zsh', 'console'],
  javascript: ['js', 'mjs', 'cjs', 'jsx'],
  typescript: ['ts', 'tsx'],
  xml: ['html', 'svg'],
  python: ['py', 'python3'],
  rust: ['rs'],
  yaml: ['yml', 'toml'],
  markdown: ['md'],
};

/**
 * Registers the shared languages and their aliases with `hljs`, plus `more` (a renderer's own:
 * the terminal adds C, C++ and Java, which the notes page leaves out of its bundle) with theirs.
 */
export function registerLanguages(hljs, more = {}, moreAliases = {}) {
  for (const [name, language] of Object.entries({ ...LANGUAGES, ...more }))
    hljs.registerLanguage(name, language);
  for (const [languageName, aliases] of Object.entries({ ...ALIASES, ...moreAliases }))
    hljs.registerAliases(aliases, { languageName });
  return hljs;
}
