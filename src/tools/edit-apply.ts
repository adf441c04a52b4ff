// The pure part of edit_file: a file's text with its byte-order mark and line endings taken apart,
// exact-match edits applied in order (all or nothing), and the messages a model needs to retry a
// failed match: not found (with the most similar lines) or found several times (with where).

export interface Edit {
  old_string: string;
  new_string: string;
  replace_all?: boolean | undefined;
}

/** A text file as edit_file works on it: the BOM and CRLF endings are put back when written. */
export interface TextForm {
  bom: boolean;
  /** CRLF only when every line break of the file is one; then `text` holds LF. */
  eol: '\n' | '\r\n';
  text: string;
}

const BOM = '\uFEFF';

export function splitText(raw: string): TextForm {
  const bom = raw.startsWith(BOM);
  const body = bom ? raw.slice(1) : raw;
  const crlf = body.includes('\r\n') && !/(^|[^\r])\n/.test(body);
  return { bom, eol: crlf ? '\r\n' : '\n', text: crlf ? body.replace(/\r\n/g, '\n') : body };
}

export function joinText(form: TextForm, text: string): string {
  return (form.bom ? BOM : '') + (form.eol === '\r\n' ? text.replace(/\n/g, '\r\n') : text);
}

export type EditOutcome =
  | { ok: true; text: string; replacements: number }
  | { ok: false; message: string; index: number };

/** The 1-based line number of a character offset. */
function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) found.push(i);
  return found;
}

/**
 * Applies `edits` in order, each to the result of the one before. Each `old_string` must occur
 * exactly once unless `replace_all`. `eol` is the file's line ending: a CRLF file is matched in its
 * LF form, so the model's strings are brought to LF as well.
 */
export function applyEdits(text: string, edits: readonly Edit[], eol: '\n' | '\r\n' = '\n'): EditOutcome {
  let current = text;
  let replacements = 0;
  const norm = (s: string) => (eol === '\r\n' ? s.replace(/\r\n/g, '\n') : s);
  for (const [index, edit] of edits.entries()) {
    const label = edits.length > 1 ? `edit ${index + 1} of ${edits.length}` : 'the edit';
    const after = index > 0 ? ' (after the edits before it)' : '';
    const oldString = norm(edit.old_string);
    const newString = norm(edit.new_string);
    const fail = (message: string): EditOutcome => ({ ok: false, index, message: `${label}: ${message}` });
    if (oldString === '') return fail('old_string is empty; give the exact text to replace');
    if (oldString === newString) return fail('old_string and new_string are the same; nothing would change');
    const found = occurrences(current, oldString);
    if (found.length === 0)
      return fail(`old_string was not found in the file${after}. ${nearMiss(current, oldString)}`);
    if (found.length > 1 && !edit.replace_all) {
      const lines = [...new Set(found.slice(0, 10).map((offset) => lineOf(current, offset)))];
      const shown = lines.join(', ') + (found.length > 10 ? ', …' : '');
      return fail(
        `old_string was found ${found.length} times${after} (at lines ${shown}); include more of the surrounding lines so it matches exactly once, or set replace_all to change every occurrence`,
      );
    }
    current = edit.replace_all
      ? current.split(oldString).join(newString)
      : current.slice(0, found[0]) + newString + current.slice(found[0]! + oldString.length);
    replacements += found.length;
  }
  if (current === text) {
    return { ok: false, index: edits.length - 1, message: 'the edits leave the file unchanged' };
  }
  return { ok: true, text: current, replacements };
}

// --- the closest lines, for a failed match

const MAX_SHOWN_LINES = 30;
const MAX_LINE_CHARS = 200;
/** Needle lines compared per window: enough to place it, bounded so a huge needle stays cheap. */
const MAX_NEEDLE_LINES = 8;

function bigrams(line: string): Set<string> {
  const s = line.trim().replace(/\s+/g, ' ').slice(0, MAX_LINE_CHARS);
  const out = new Set<string>();
  for (let i = 0; i < s.length - 1; i++) out.add(s.slice(i, i + 2));
  if (s.length === 1) out.add(s);
  return out;
}

function dice(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  if (a.size === 0 || b.size === 0) return 0;
  const [small, large] = a.size < b.size ? [a, b] : [b, a];
  let shared = 0;
  for (const gram of small) if (large.has(gram)) shared++;
  return (2 * shared) / (a.size + b.size);
}

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

/** The window of lines most like `needle`, as 1-based first and last line and a 0..1 score. */
export function closestLines(text: string, needle: string): { first: number; last: number; score: number } {
  const lines = text.split('\n');
  const wanted = needle.replace(/\n+$/, '').split('\n');
  const k = Math.min(wanted.length, lines.length);
  // Compare the first and last lines of a long needle: they place it.
  const picks =
    wanted.length <= MAX_NEEDLE_LINES
      ? wanted.map((_, j) => j)
      : [0, 1, 2, 3, wanted.length - 4, wanted.length - 3, wanted.length - 2, wanted.length - 1];
  const wantedGrams = picks.map((j) => bigrams(wanted[j]!));
  const lineGrams = lines.map(bigrams);
  let best = { first: 1, last: k, score: -1 };
  for (let start = 0; start + k <= lines.length; start++) {
    let sum = 0;
    let count = 0;
    for (const [p, j] of picks.entries()) {
      if (j >= k) continue;
      sum += dice(wantedGrams[p]!, lineGrams[start + j]!);
      count++;
    }
    const score = count === 0 ? 0 : sum / count;
    if (score > best.score) best = { first: start + 1, last: start + k, score };
  }
  return best;
}

function numbered(text: string, first: number, last: number): string {
  const lines = text.split('\n');
  const end = Math.min(last, first + MAX_SHOWN_LINES - 1);
  const width = String(end).length;
  const out: string[] = [];
  for (let n = first; n <= end; n++) {
    const line = lines[n - 1] ?? '';
    const cut = line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line;
    out.push(`${String(n).padStart(width)}| ${cut}`);
  }
  if (end < last) out.push(`… (${last - end} more lines)`);
  return out.join('\n');
}

/** What to tell the model when `needle` is not in `text`: whitespace-only differences, or the closest lines. */
function nearMiss(text: string, needle: string): string {
  if (text === '') return 'The file is empty.';
  const wanted = needle.replace(/\n+$/, '').split('\n').map(squash);
  if (wanted.some((line) => line !== '')) {
    const lines = text.split('\n').map(squash);
    const k = wanted.length;
    const hits: number[] = [];
    for (let start = 0; start + k <= lines.length && hits.length < 2; start++) {
      let same = true;
      for (let j = 0; j < k && same; j++) same = lines[start + j] === wanted[j];
      if (same) hits.push(start + 1);
    }
    if (hits.length === 1) {
      const first = hits[0]!;
      return `It matches lines ${first}-${first + k - 1} only when spaces and indentation are ignored. Those lines are exactly:\n${numbered(text, first, first + k - 1)}`;
    }
  }
  const best = closestLines(text, needle);
  if (best.score < 0.3) {
    return 'No lines of the file look like it; read the file again (read_file) to see its current text.';
  }
  return `The most similar lines are ${best.first}-${best.last}:\n${numbered(text, best.first, best.last)}\nCopy old_string exactly from the file (read_file shows the current text).`;
}
