// One shell word of the subset rune judges (docs/adr/0037-run-what-was-judged.md): its value after
// quote removal, whether an unquoted glob makes the shell expand it, and the text rune runs for it.
// Every character the shell would not expand is single-quoted in that text, so dash, bash and
// busybox ash can read it only one way. Pure.

export interface WordToken {
  value: string;
  /** An unquoted `*`, `?` or bracket expression: the shell replaces the word with file names. */
  glob: boolean;
  /** The word as rune runs it. */
  text: string;
  /** No character was quoted or escaped (reserved words, assignments and descriptor numbers are plain). */
  plain: boolean;
  /** Position of an unquoted `=` (an assignment in command position), or -1. */
  equals: number;
}

/**
 * A word, or the first construct in it rune does not judge — with `complete` when the parser
 * found where the word ends and can read on (the words after it are still judged: the floor,
 * what an approval grants) — or a syntax error.
 */
export type WordResult = { word: WordToken } | { hazard: string; complete?: boolean } | { error: string };

/** A run of characters that are literal wherever they stand in a word. */
const PLAIN = /[A-Za-z0-9_.,:/@%+=^-]+/y;

/** Characters that end an unquoted word. */
const ENDS_WORD = new Set([' ', '\t', '\n', '|', '&', ';', '(', ')', '<', '>']);

/** After `$`, these start an expansion (parameter, special parameter, `${`, `$(`, bash's `$[`, `$'`, `$"`). */
const EXPANDS_AFTER_DOLLAR = /[A-Za-z0-9_@*#?$!{([\-'"]/;

/** A single-quoted shell word for any string: `'…'` with each `'` written `'\''`. */
export function quote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/**
 * Reads the word starting at `start` (not a blank or operator). Stops at the first expansion it
 * cannot prove literal and names it; a quote left open is an error.
 */
export function readWord(text: string, start: number): { end: number; result: WordResult } {
  // Most words are plain characters that nothing in sh treats specially: one regular expression.
  PLAIN.lastIndex = start;
  const plain = PLAIN.exec(text);
  if (plain && (start + plain[0].length === text.length || ENDS_WORD.has(text[start + plain[0].length]!))) {
    const value = plain[0];
    return {
      end: start + value.length,
      result: { word: { value, glob: false, text: quote(value), plain: true, equals: value.indexOf('=') } },
    };
  }
  const chars: string[] = [];
  const quoted: boolean[] = [];
  const push = (ch: string, isQuoted: boolean) => {
    chars.push(ch);
    quoted.push(isQuoted);
  };
  let hazard: string | undefined;
  const note = (found: string) => {
    hazard ??= found;
  };
  let at = start;
  while (at < text.length) {
    const ch = text[at]!;
    if (ENDS_WORD.has(ch)) break;
    if (ch === '\\') {
      const next = text[at + 1];
      if (next === undefined) return { end: at, result: { error: 'a backslash at the end of the command' } };
      // A line continuation joins the lines; any other escaped character is literal.
      if (next !== '\n') push(next, true);
      at += 2;
      continue;
    }
    if (ch === "'") {
      const close = text.indexOf("'", at + 1);
      if (close === -1) return { end: at, result: { error: 'an unterminated single quote' } };
      for (let index = at + 1; index < close; index++) push(text[index]!, true);
      at = close + 1;
      continue;
    }
    if (ch === '"') {
      const inner = readDoubleQuoted(text, at + 1, push, note);
      if ('end' in inner) {
        at = inner.end;
        continue;
      }
      return { end: at, result: hazard ? { hazard } : inner };
    }
    // sh removes line continuations first: `$\<newline>(` is `$(`.
    const afterDollar = ch === '$' ? pastContinuations(text, at + 1) : at;
    if (ch === '`' || (ch === '$' && EXPANDS_AFTER_DOLLAR.test(text[afterDollar] ?? ''))) {
      note(ch === '`' ? BACKTICKS : dollarHazard(text.slice(afterDollar)));
      const end = expansionEnd(text, at);
      if (end === undefined) return { end: at, result: { hazard: hazard! } };
      at = end;
      continue;
    }
    push(ch, false);
    at += 1;
  }
  if (hazard) return { end: at, result: { hazard, complete: true } };
  return { end: at, result: finishWord(chars, quoted) };
}

const BACKTICKS = 'command substitution $( … ) or backticks';

/** The inside of "…" from `at`; returns where the word goes on, or the hazard or error. */
function readDoubleQuoted(
  text: string,
  start: number,
  push: (ch: string, quoted: boolean) => void,
  note: (hazard: string) => void,
): { end: number } | { error: string } {
  let at = start;
  while (at < text.length) {
    const ch = text[at]!;
    if (ch === '"') return { end: at + 1 };
    if (ch === '\\') {
      const next = text[at + 1];
      if (next === undefined) break;
      // Inside double quotes a backslash escapes only $ ` " \ and the newline.
      if (next === '\n') at += 2;
      else if ('$`"\\'.includes(next)) {
        push(next, true);
        at += 2;
      } else {
        push('\\', true);
        at += 1;
      }
      continue;
    }
    const afterDollar = ch === '$' ? pastContinuations(text, at + 1) : at;
    if (ch === '`' || (ch === '$' && /[A-Za-z0-9_@*#?$!{([-]/.test(text[afterDollar] ?? ''))) {
      note(ch === '`' ? BACKTICKS : dollarHazard(text.slice(afterDollar)));
      const end = expansionEnd(text, at);
      if (end === undefined) break;
      at = end;
      continue;
    }
    push(ch, true);
    at += 1;
  }
  return { error: 'an unterminated double quote' };
}

/**
 * Where the expansion or substitution starting at `at` (a `$` or a backtick) ends, so the parser can
 * read on past a construct it refuses; undefined when it does not end. Best effort: what comes after
 * is only ever judged more strictly (the line is refused anyway), never run as rune's re-write.
 */
function expansionEnd(text: string, at: number): number | undefined {
  if (text[at] === '`') return closing(text, at + 1, '`');
  const next = pastContinuations(text, at + 1);
  const ch = text[next];
  if (ch === '(' || ch === '{' || ch === '[')
    return balancedEnd(text, next, ch, ch === '(' ? ')' : ch === '{' ? '}' : ']');
  if (ch === "'") return closing(text, next + 1, "'");
  if (ch === '"') return quotedEnd(text, next + 1);
  if (ch !== undefined && /[A-Za-z_]/.test(ch)) {
    let end = next;
    while (/\w/.test(text[end] ?? '')) end++;
    return end;
  }
  return next + 1;
}

/** After the next unescaped `close` from `at`. */
function closing(text: string, at: number, close: string): number | undefined {
  for (let index = at; index < text.length; index++) {
    if (text[index] === '\\') index++;
    else if (text[index] === close) return index + 1;
  }
  return undefined;
}

/** After the `"` that closes a double-quoted string whose inside starts at `at`. */
function quotedEnd(text: string, at: number): number | undefined {
  let index = at;
  while (index < text.length) {
    const ch = text[index]!;
    if (ch === '"') return index + 1;
    if (ch === '\\') index += 2;
    else if (ch === '`' || (ch === '$' && '({['.includes(text[index + 1] ?? ''))) {
      const end = expansionEnd(text, index);
      if (end === undefined) return undefined;
      index = end;
    } else index++;
  }
  return undefined;
}

/** After the bracket that closes the one at `open`, skipping quotes and nested substitutions. */
function balancedEnd(text: string, open: number, opener: string, closer: string): number | undefined {
  let depth = 0;
  let index = open;
  while (index < text.length) {
    const ch = text[index]!;
    let end: number | undefined = index + 1;
    if (ch === '\\') end = index + 2;
    else if (ch === "'") end = closing(text, index + 1, "'");
    else if (ch === '"') end = quotedEnd(text, index + 1);
    else if (ch === '`') end = expansionEnd(text, index);
    else if (ch === opener) depth++;
    else if (ch === closer && --depth === 0) return index + 1;
    if (end === undefined) return undefined;
    index = end;
  }
  return undefined;
}

/** The position after any line continuations (backslash-newline) at `at`. */
function pastContinuations(text: string, at: number): number {
  let next = at;
  while (text[next] === '\\' && text[next + 1] === '\n') next += 2;
  return next;
}

/** What `$` starts, named from the text after it. */
function dollarHazard(after: string): string {
  const next = after[0];
  if (next === '(') return 'command substitution $( … ) or arithmetic $(( … ))';
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax, not a template
  if (next === '{') return 'parameter expansion ${ … }';
  if (next === '[') return 'arithmetic expansion $[ … ] (bash)';
  if (next === "'") return "ANSI-C quoting $'…'";
  if (next === '"') return 'a translated string $"…"';
  return `parameter expansion $${/^[A-Za-z_]\w*/.exec(after)?.[0] ?? next}`;
}

/** Tilde, globs and braces of a word read as characters with their quoting; its run-time text. */
function finishWord(chars: string[], quoted: boolean[]): WordResult {
  const raw = new Array<boolean>(chars.length).fill(false);
  // A leading unquoted `~` alone or before `/` is the home folder; `~user`, `~+`, `~-` are not literal.
  if (chars[0] === '~' && !quoted[0]) {
    let prefixEnd = 1;
    while (prefixEnd < chars.length && !(chars[prefixEnd] === '/' && !quoted[prefixEnd])) prefixEnd++;
    // The `/` after it stays unquoted too: a quoted character in the tilde-prefix stops the expansion.
    if (prefixEnd === 1) raw.fill(true, 0, chars[1] === '/' ? 2 : 1);
    else if (quoted.slice(1, prefixEnd).every((q) => !q))
      return { hazard: 'tilde expansion of ~user, ~+ or ~-', complete: true };
  }
  let glob = false;
  for (let index = 0; index < chars.length; index++) {
    if (quoted[index]) continue;
    const ch = chars[index]!;
    if (ch === '*' || ch === '?') {
      raw[index] = true;
      glob = true;
    } else if (ch === '[') {
      const close = bracketEnd(chars, quoted, index);
      if (close === 'unusual')
        return { hazard: 'a glob bracket expression with quoted characters', complete: true };
      if (close !== undefined) {
        raw.fill(true, index, close + 1);
        glob = true;
        index = close;
      }
    }
  }
  if (hasBraceExpansion(chars, quoted)) {
    return { hazard: 'brace expansion {a,b} (bash expands it, dash does not)', complete: true };
  }
  const value = chars.join('');
  const equals = chars.findIndex((ch, index) => ch === '=' && !quoted[index]);
  return {
    word: { value, glob, text: render(chars, raw), plain: quoted.every((q) => !q), equals },
  };
}

/** Where the bracket expression opened at `open` closes, undefined if it does not (a literal `[`). */
function bracketEnd(chars: string[], quoted: boolean[], open: number): number | 'unusual' | undefined {
  let at = open + 1;
  if (chars[at] === '!' || chars[at] === '^') at++;
  if (chars[at] === ']') at++;
  while (at < chars.length) {
    if (chars[at] === '[' && ':.='.includes(chars[at + 1] ?? 'x')) {
      const kind = chars[at + 1]!;
      let inner = at + 2;
      while (inner < chars.length - 1 && !(chars[inner] === kind && chars[inner + 1] === ']')) inner++;
      if (inner >= chars.length - 1) return undefined;
      at = inner + 2;
      continue;
    }
    if (chars[at] === ']' && !quoted[at]) {
      return quoted.slice(open, at).some(Boolean) ? 'unusual' : at;
    }
    at++;
  }
  return undefined;
}

/** bash (also as /bin/sh) expands `{a,b}` and `{1..3}`; dash and ash pass them on as they are. */
function hasBraceExpansion(chars: string[], quoted: boolean[]): boolean {
  let open = -1;
  let separated = false;
  for (let index = 0; index < chars.length; index++) {
    if (quoted[index]) continue;
    const ch = chars[index];
    if (ch === '{') {
      open = index;
      separated = false;
    } else if (
      open !== -1 &&
      (ch === ',' || (ch === '.' && chars[index + 1] === '.' && !quoted[index + 1]))
    ) {
      separated = true;
    } else if (ch === '}' && open !== -1 && separated) return true;
  }
  return false;
}

/** Raw characters stay unquoted (globs, a leading tilde); runs of the others are single-quoted. */
function render(chars: string[], raw: boolean[]): string {
  if (chars.length === 0) return "''";
  let out = '';
  let run = '';
  for (let index = 0; index < chars.length; index++) {
    if (raw[index]) {
      if (run) out += quote(run);
      run = '';
      out += chars[index];
    } else run += chars[index];
  }
  return run ? out + quote(run) : out;
}
