// "Always allow": adds one entry to a [policy] list of rune.toml by editing the text in place, so
// comments, order and unrelated keys survive (smol-toml would drop comments). The edit is checked
// by re-parsing, written to a temp file and renamed, under a lock file that serialises processes.
// "Saved" means durable: the temp file is fsynced before the rename and the folder after it (the
// rename is a change of the folder; without its fsync a power cut can bring back the old file).
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parse as parseToml } from 'smol-toml';
import { RuneError } from '../core/errors.ts';
import { makeDir } from '../core/make-dir.ts';
import type { AllowlistSuggestion } from './types.ts';

type ListName = AllowlistSuggestion['list'];

export interface LockOptions {
  /** How long to wait for another process's lock before giving up. */
  timeoutMs?: number;
  /** A lock older than this is taken to be left by a crashed process. */
  staleMs?: number;
  /** fsync(2) of a descriptor (tests observe the order of syncs through it). */
  fsync?: (fd: number) => void;
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Runs `fn` while holding `<file>.lock` (O_EXCL create), waiting for other holders. */
export function withFileLock<T>(file: string, fn: () => T, options: LockOptions = {}): T {
  const lock = `${file}.lock`;
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  const staleMs = options.staleMs ?? 30_000;
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(lock, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      try {
        if (Date.now() - statSync(lock).mtimeMs > staleMs) unlinkSync(lock);
      } catch {
        // The holder released it meanwhile.
      }
      if (Date.now() > deadline) {
        throw new RuneError('IO', `${file} is locked by another rune process (${lock}); try again`);
      }
      Atomics.wait(sleeper, 0, 0, Math.min(5 + attempt * 5, 50));
    }
  }
  try {
    return fn();
  } finally {
    try {
      unlinkSync(lock);
    } catch {
      // Already gone: nothing to release.
    }
  }
}

/** Adds `value` to `[policy] <list>` of the TOML file (created when missing). Returns false when already there. */
export function addAllowlistEntry(
  file: string,
  list: ListName,
  value: string,
  options: LockOptions = {},
): boolean {
  const sync = options.fsync ?? fsyncSync;
  const created = makeDir(dirname(file));
  // Folders made here are entries of their parents: those must be durable too.
  if (created) {
    for (let dir = dirname(file); dir !== dirname(created); dir = dirname(dir))
      syncFolder(dirname(dir), sync);
  }
  return withFileLock(
    file,
    () => {
      let text = '';
      let mode = 0o600;
      try {
        text = readFileSync(file, 'utf8');
        mode = statSync(file).mode & 0o777;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
      const before = parseOrThrow(file, text);
      const current = (before.policy as Record<string, unknown> | undefined)?.[list];
      if (Array.isArray(current) && current.includes(value)) return false;
      const next = insertEntry(text, list, value);
      const after = parseOrThrow(file, next);
      // Through JSON so that only values are compared, not the prototypes smol-toml gives tables.
      const expected = JSON.parse(JSON.stringify(before)) as Record<string, unknown>;
      expected.policy ??= {};
      const policy = expected.policy as Record<string, unknown>;
      policy[list] = [...(Array.isArray(current) ? current : []), value];
      if (!isDeepStrictEqual(JSON.parse(JSON.stringify(after)), expected)) {
        throw new RuneError(
          'IO',
          `could not add '${value}' to ${list} in ${file} without changing anything else; add it by hand`,
        );
      }
      writeAtomically(file, next, mode, sync);
      return true;
    },
    options,
  );
}

function parseOrThrow(file: string, text: string): Record<string, unknown> {
  try {
    return parseToml(text) as Record<string, unknown>;
  } catch (cause) {
    throw new RuneError('CONFIG_INVALID', `${file} is not valid TOML; not editing it`, { cause });
  }
}

function writeAtomically(file: string, text: string, mode: number, sync: (fd: number) => void): void {
  const temp = join(dirname(file), `.${randomBytes(6).toString('hex')}.rune.toml.tmp`);
  const fd = openSync(temp, 'wx', mode);
  try {
    writeSync(fd, text);
    sync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(temp, file);
  } catch (error) {
    unlinkSync(temp);
    throw error;
  }
  syncFolder(dirname(file), sync);
}

/** Makes the entries of `dir` (a rename into it, a new name) durable. */
function syncFolder(dir: string, sync: (fd: number) => void): void {
  const fd = openSync(dir, 'r');
  try {
    sync(fd);
  } finally {
    closeSync(fd);
  }
}

const HEADER = /^[ \t]*\[[ \t]*([A-Za-z0-9_.\-" ]+?)[ \t]*\][ \t]*(#.*)?$/;

/** The text with `value` appended to `[policy] <list>`; pure. Throws when the layout is not one it can edit safely. */
export function insertEntry(text: string, list: ListName, value: string): string {
  const literal = JSON.stringify(value);
  const lines = text.split('\n');
  const offsets: number[] = [];
  let offset = 0;
  for (const line of lines) {
    offsets.push(offset);
    offset += line.length + 1;
  }
  let section = -1;
  let sectionEnd = lines.length;
  for (let index = 0; index < lines.length; index++) {
    const match = HEADER.exec(lines[index]!);
    if (!match || lines[index]!.trimStart().startsWith('[[')) {
      if (section !== -1 && lines[index]!.trimStart().startsWith('[[') && index > section) {
        sectionEnd = Math.min(sectionEnd, index);
      }
      continue;
    }
    if (section === -1 && match[1] === 'policy') section = index;
    else if (section !== -1 && index > section) {
      sectionEnd = Math.min(sectionEnd, index);
    }
  }
  if (section === -1) {
    if (/^[ \t]*policy[ \t]*[.=]/m.test(text) || /^[ \t]*\[[ \t]*policy[ \t]*\./m.test(text)) {
      throw new RuneError(
        'IO',
        'the [policy] settings are written as dotted keys or an inline table; add the entry by hand',
      );
    }
    const separator = text === '' || text.endsWith('\n\n') ? '' : text.endsWith('\n') ? '\n' : '\n\n';
    return `${text}${separator}[policy]\n${list} = [${literal}]\n`;
  }
  const keyPattern = new RegExp(`^[ \\t]*${list}[ \\t]*=`);
  for (let index = section + 1; index < sectionEnd; index++) {
    const match = keyPattern.exec(lines[index]!);
    if (!match) continue;
    const start = offsets[index]! + match[0].length;
    return appendToArray(text, start, literal);
  }
  const at = offsets[section]! + lines[section]!.length + 1;
  return `${text.slice(0, at)}${list} = [${literal}]\n${text.slice(at)}`;
}

/** Inserts `literal` as the last element of the TOML array whose value starts after `start`. */
function appendToArray(text: string, start: number, literal: string): string {
  let at = start;
  while (text[at] === ' ' || text[at] === '\t') at++;
  if (text[at] !== '[')
    throw new RuneError('IO', 'the allowlist is not written as an array; add the entry by hand');
  at++;
  let lastSignificant = -1;
  let depth = 1;
  while (at < text.length) {
    const ch = text[at]!;
    if (ch === '#') {
      while (at < text.length && text[at] !== '\n') at++;
      continue;
    }
    if (ch === '"' || ch === "'") {
      const triple = text.startsWith(ch.repeat(3), at);
      const close = triple ? ch.repeat(3) : ch;
      at += close.length;
      while (at < text.length && !text.startsWith(close, at)) {
        if (ch === '"' && text[at] === '\\') at++;
        at++;
      }
      at += close.length;
      lastSignificant = at - 1;
      continue;
    }
    if (ch === '[') depth++;
    if (ch === ']') {
      depth--;
      if (depth === 0) break;
    }
    if (!/\s/.test(ch)) lastSignificant = at;
    at++;
  }
  if (depth !== 0) throw new RuneError('IO', 'the allowlist array is not closed; add the entry by hand');
  if (lastSignificant === -1) return `${text.slice(0, at)}${literal}${text.slice(at)}`;
  const multiline = text.slice(start, at).includes('\n');
  const trailingComma = text[lastSignificant] === ',';
  if (!multiline) {
    const insert = trailingComma ? ` ${literal}` : `, ${literal}`;
    return `${text.slice(0, lastSignificant + 1)}${insert}${text.slice(lastSignificant + 1)}`;
  }
  // One element per line: the new one goes on its own line after the last, keeping that line's
  // indent, trailing-comma style and any comment at its end.
  const lineStart = text.lastIndexOf('\n', lastSignificant) + 1;
  const indent = /^[ \t]*/.exec(text.slice(lineStart))![0];
  const newline = text.indexOf('\n', lastSignificant);
  const lineEnd = newline === -1 || newline > at ? at : newline;
  const comma = trailingComma ? '' : ',';
  const line = `\n${indent}${literal}${trailingComma ? ',' : ''}`;
  return `${text.slice(0, lastSignificant + 1)}${comma}${text.slice(lastSignificant + 1, lineEnd)}${line}${text.slice(lineEnd)}`;
}
