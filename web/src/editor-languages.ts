// The editor's Markdown language and the syntax highlighting inside fenced code blocks. Each code
// language is a dynamic import, so its parser is fetched the first time a fence names it and never
// otherwise. The set mirrors what the preview highlights (markdown.ts), plus a few common in notes.
import { markdownKeymap, markdownLanguage, pasteURLAsLink } from '@codemirror/lang-markdown';
import {
  Language,
  LanguageDescription,
  LanguageSupport,
  ParseContext,
  StreamLanguage,
  type StreamParser,
} from '@codemirror/language';
import { Prec } from '@codemirror/state';
import { keymap } from '@codemirror/view';
import type { Parser } from '@lezer/common';
import { type MarkdownParser, parseCode } from '@lezer/markdown';

const legacy = (parser: Promise<StreamParser<unknown>>) =>
  parser.then((mode) => new LanguageSupport(StreamLanguage.define(mode)));

const codeLanguages: LanguageDescription[] = [
  LanguageDescription.of({
    name: 'JavaScript',
    alias: ['javascript', 'js', 'mjs', 'cjs', 'node'],
    load: () => import('@codemirror/lang-javascript').then((m) => m.javascript()),
  }),
  LanguageDescription.of({
    name: 'JSX',
    alias: ['jsx'],
    load: () => import('@codemirror/lang-javascript').then((m) => m.javascript({ jsx: true })),
  }),
  LanguageDescription.of({
    name: 'TypeScript',
    alias: ['typescript', 'ts'],
    load: () => import('@codemirror/lang-javascript').then((m) => m.javascript({ typescript: true })),
  }),
  LanguageDescription.of({
    name: 'TSX',
    alias: ['tsx'],
    load: () =>
      import('@codemirror/lang-javascript').then((m) => m.javascript({ jsx: true, typescript: true })),
  }),
  LanguageDescription.of({
    name: 'JSON',
    alias: ['json', 'json5', 'jsonc'],
    load: () => import('@codemirror/lang-json').then((m) => m.json()),
  }),
  LanguageDescription.of({
    name: 'CSS',
    alias: ['css'],
    load: () => import('@codemirror/lang-css').then((m) => m.css()),
  }),
  LanguageDescription.of({
    name: 'HTML',
    alias: ['html', 'htm', 'xhtml'],
    load: () => import('@codemirror/lang-html').then((m) => m.html()),
  }),
  LanguageDescription.of({
    name: 'XML',
    alias: ['xml', 'svg'],
    load: () => import('@codemirror/lang-xml').then((m) => m.xml()),
  }),
  LanguageDescription.of({
    name: 'Python',
    alias: ['python', 'py'],
    load: () => import('@codemirror/lang-python').then((m) => m.python()),
  }),
  LanguageDescription.of({
    name: 'Rust',
    alias: ['rust', 'rs'],
    load: () => import('@codemirror/lang-rust').then((m) => m.rust()),
  }),
  LanguageDescription.of({
    name: 'Go',
    alias: ['go', 'golang'],
    load: () => import('@codemirror/lang-go').then((m) => m.go()),
  }),
  LanguageDescription.of({
    name: 'SQL',
    alias: ['sql', 'postgres', 'postgresql', 'sqlite', 'mysql'],
    load: () => import('@codemirror/lang-sql').then((m) => m.sql()),
  }),
  LanguageDescription.of({
    name: 'YAML',
    alias: ['yaml', 'yml'],
    load: () => import('@codemirror/lang-yaml').then((m) => m.yaml()),
  }),
  LanguageDescription.of({
    name: 'C++',
    alias: ['cpp', 'c++', 'cc', 'c', 'h', 'hpp'],
    load: () => import('@codemirror/lang-cpp').then((m) => m.cpp()),
  }),
  LanguageDescription.of({
    name: 'Java',
    alias: ['java', 'kotlin'],
    load: () => import('@codemirror/lang-java').then((m) => m.java()),
  }),
  LanguageDescription.of({
    name: 'Shell',
    alias: ['bash', 'sh', 'shell', 'zsh', 'console'],
    load: () => legacy(import('@codemirror/legacy-modes/mode/shell').then((m) => m.shell)),
  }),
  LanguageDescription.of({
    name: 'Diff',
    alias: ['diff', 'patch'],
    load: () => legacy(import('@codemirror/legacy-modes/mode/diff').then((m) => m.diff)),
  }),
  LanguageDescription.of({
    name: 'TOML',
    alias: ['toml'],
    load: () => legacy(import('@codemirror/legacy-modes/mode/toml').then((m) => m.toml)),
  }),
  LanguageDescription.of({
    name: 'Dockerfile',
    alias: ['dockerfile', 'docker'],
    load: () => legacy(import('@codemirror/legacy-modes/mode/dockerfile').then((m) => m.dockerFile)),
  }),
];

/** The language of a fence's info string ("ts", "python title=x"), loading it on first use. */
function codeParser(info: string): Parser | null {
  const name = /\S*/.exec(info)?.[0];
  const found = name ? LanguageDescription.matchLanguageName(codeLanguages, name, true) : null;
  if (!found) return null;
  // Until the language has loaded, the fence is skipped and re-parsed when it arrives.
  return found.support ? found.support.language.parser : ParseContext.getSkippingParser(found.load());
}

/**
 * GitHub-flavoured Markdown with highlighted fences. Built here rather than with lang-markdown's
 * `markdown()`, which parses inline HTML with @codemirror/lang-html and so pulls HTML, CSS and
 * JavaScript parsers (~150 KB) into the editor chunk; inline HTML shows as plain text instead.
 */
const markdownWithCode = new Language(
  markdownLanguage.data,
  (markdownLanguage.parser as MarkdownParser).configure(parseCode({ codeParser })),
  [],
  'markdown',
);

export function markdownSupport(): LanguageSupport {
  return new LanguageSupport(markdownWithCode, [pasteURLAsLink, Prec.high(keymap.of(markdownKeymap))]);
}
