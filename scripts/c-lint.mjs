#!/usr/bin/env node
// The C sources' share of `npm run lint`: no function in native/src/ longer than 150 lines, the
// same rule biome's noExcessiveLinesPerFunction holds TypeScript to (AGENTS.md). A function is
// counted from the line of its name to its closing brace, comments and blank lines included.
//
//   node scripts/c-lint.mjs [FILE.c ...]     (default: every .c and .h under native/src)
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MAX_LINES = 150;

/**
 * The text with comments, string and character literals and preprocessor lines blanked out
 * (newlines kept, so line numbers hold): what is left is declarations, braces and code.
 */
export function codeOnly(text) {
  let out = '';
  let i = 0;
  let lineStart = true;
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    if (lineStart && /^[ \t]*#/.test(text.slice(i, text.indexOf('\n', i) + 1 || text.length))) {
      // A directive, continued across lines by a trailing backslash (an X-macro's table).
      while (i < text.length) {
        const end = text.indexOf('\n', i);
        const line = end === -1 ? text.slice(i) : text.slice(i, end);
        i = end === -1 ? text.length : end + 1;
        out += end === -1 ? '' : '\n';
        if (
          !line
            .replace(/\/\*.*?\*\//g, '')
            .trimEnd()
            .endsWith('\\')
        )
          break;
      }
      continue;
    }
    if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end === -1 ? text.length : end + 2;
      out += text.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
    } else if (c === '/' && next === '/') {
      while (i < text.length && text[i] !== '\n') {
        out += ' ';
        i++;
      }
    } else if (c === '"' || c === "'") {
      out += ' ';
      i++;
      while (i < text.length && text[i] !== c) {
        if (text[i] === '\\') {
          out += ' ';
          i++;
        }
        out += text[i] === '\n' ? '\n' : ' ';
        i++;
      }
      out += ' ';
      i++;
    } else {
      out += c;
      i++;
    }
    lineStart = c === '\n' || (lineStart && (c === ' ' || c === '\t'));
  }
  return out;
}

/** Every function definition of a C file: its name, first line and length in lines. */
export function functionsOf(text) {
  const code = codeOnly(text);
  const lineAt = (index) => code.slice(0, index).split('\n').length;
  const out = [];
  let depth = 0;
  for (let i = 0; i < code.length; i++) {
    const c = code[i];
    if (c === '{') {
      if (depth === 0) {
        // A body at file level that follows `)` is a function's; `= {` and `struct x {` are not.
        const before = code.slice(0, i).trimEnd();
        if (before.endsWith(')')) {
          const name = nameBefore(code, before.length - 1);
          const close = matchingBrace(code, i);
          if (name && close !== -1) {
            const first = lineAt(name.index);
            out.push({ name: name.name, line: first, lines: lineAt(close) - first + 1 });
          }
        }
      }
      depth++;
    } else if (c === '}') depth = Math.max(0, depth - 1);
  }
  return out;
}

/** The identifier before the parameter list that closes at `close`. */
function nameBefore(code, close) {
  let depth = 0;
  for (let i = close; i >= 0; i--) {
    if (code[i] === ')') depth++;
    else if (code[i] === '(') {
      depth--;
      if (depth === 0) {
        const match = /([A-Za-z_]\w*)\s*$/.exec(code.slice(0, i));
        return match ? { name: match[1], index: match.index } : undefined;
      }
    }
  }
  return undefined;
}

function matchingBrace(code, open) {
  let depth = 0;
  for (let i = open; i < code.length; i++) {
    if (code[i] === '{') depth++;
    else if (code[i] === '}' && --depth === 0) return i;
  }
  return -1;
}

function main() {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const dir = join(root, 'native/src');
  const files = process.argv.slice(2).length
    ? process.argv.slice(2)
    : readdirSync(dir)
        .filter((name) => /\.[ch]$/.test(name))
        .sort()
        .map((name) => join(dir, name));
  const problems = [];
  for (const file of files) {
    for (const fn of functionsOf(readFileSync(file, 'utf8'))) {
      if (fn.lines > MAX_LINES)
        problems.push(
          `${relative(root, file)}:${fn.line}: ${fn.name}() has ${fn.lines} lines (at most ${MAX_LINES}): split it along the lines its own comments draw`,
        );
    }
  }
  for (const problem of problems) process.stderr.write(`${problem}\n`);
  if (problems.length > 0) process.exit(1);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
