// Searching one file's bytes for a regular expression, line by line like grep: a byte-level
// pre-check for the pattern's literal part, the binary test (a NUL in the first 8000 bytes, as git
// does), one pass of the regex over the whole text, and only then a look at single lines.
import { requiredLiterals } from './literal.ts';

export interface ResultLine {
  /** 1-based line number. */
  n: number;
  text: string;
  /** false for a context line. */
  match: boolean;
}

/** The first bytes git looks at to call a file binary. */
export const BINARY_SNIFF = 8000;
/** Characters of a matching line shown to the model; a minified file's line is cut around the match. */
const MAX_LINE_CHARS = 300;

export interface Matcher {
  /** Runs over whole texts: global and multiline, so lastIndex can be reset per file. */
  whole: RegExp;
  /** Runs over one line. */
  line: RegExp;
  /** Byte strings one of which a matching file must hold; empty when none is known. */
  literals: Buffer[];
  /** Case-insensitive ASCII literals, checked on the latin1 view of the bytes. */
  foldedLiteral?: RegExp;
  /**
   * Every line the pattern matches alone holds the start of a whole-text match searched from the
   * line's start: true without lookarounds, which see past the line's end in the whole text.
   */
  wholeFindsLines: boolean;
}

/** Builds the matcher; throws SyntaxError (the message says why) for an invalid pattern. */
export function compileMatcher(pattern: string, caseInsensitive: boolean): Matcher {
  // Unicode mode only when the pattern asks for it: `\p{…}` and `\u{…}` mean nothing without it,
  // and plain mode accepts the loose escapes (`\-`, `\/`) models write.
  const unicode = /\\[pP]\{|\\u\{/.test(pattern) ? 'u' : '';
  const flags = (caseInsensitive ? 'i' : '') + unicode;
  const whole = new RegExp(pattern, `gm${flags}`);
  const line = new RegExp(pattern, flags);
  const literals = requiredLiterals(pattern) ?? [];
  const wholeFindsLines = !/\(\?<?[=!]/.test(pattern);
  if (!caseInsensitive)
    return { whole, line, wholeFindsLines, literals: literals.map((l) => Buffer.from(l, 'utf8')) };
  // In plain mode an ASCII letter only matches its ASCII case partner, so the latin1 view of UTF-8
  // bytes (one char per byte, no decoding cost) holds every match of an ASCII literal.
  const ascii = literals.length > 0 && literals.every((l) => /^[\x00-\x7f]+$/.test(l)) && unicode === '';
  return {
    whole,
    line,
    wholeFindsLines,
    literals: [],
    ...(ascii
      ? {
          foldedLiteral: new RegExp(
            literals.map((l) => l.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|'),
            'i',
          ),
        }
      : {}),
  };
}

export type ScanOutcome =
  | { kind: 'binary' }
  | { kind: 'none' }
  | { kind: 'lines'; lines: ResultLine[]; matches: number };

function shown(line: string, regex: RegExp): string {
  if (line.length <= MAX_LINE_CHARS) return line;
  const at = regex.exec(line)?.index ?? 0;
  const start = Math.max(0, Math.min(at - 80, line.length - MAX_LINE_CHARS));
  const end = start + MAX_LINE_CHARS;
  return `${start > 0 ? '…' : ''}${line.slice(start, end)}${end < line.length ? `… [line of ${line.length} characters]` : ''}`;
}

/**
 * The matching lines of one file (with `context` lines around them), at most `budget` matching
 * lines. Lines lose a trailing CR; a pattern is matched against each line alone, as grep does.
 */
export function scanBuffer(bytes: Buffer, matcher: Matcher, context: number, budget: number): ScanOutcome {
  if (bytes.length === 0) return { kind: 'none' };
  if (bytes.subarray(0, BINARY_SNIFF).includes(0)) return { kind: 'binary' };
  if (matcher.literals.length > 0 && !matcher.literals.some((literal) => bytes.includes(literal))) {
    return { kind: 'none' };
  }
  if (matcher.foldedLiteral && !matcher.foldedLiteral.test(bytes.toString('latin1'))) {
    return { kind: 'none' };
  }
  const text = bytes.toString('utf8');
  const hasCr = bytes.includes(13);
  // Any line's match is a match of the whole text, so the whole-text pass finds every matching
  // line without splitting the file (a minified bundle is one long line, a generated one 100,000).
  if (!hasCr && matcher.wholeFindsLines) {
    if (context === 0) return matchingLines(text, matcher, budget);
    matcher.whole.lastIndex = 0;
    if (!matcher.whole.test(text)) return { kind: 'none' };
  }
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const hits: number[] = [];
  for (let i = 0; i < lines.length && hits.length < budget; i++) {
    let line = lines[i]!;
    if (hasCr && line.endsWith('\r')) {
      line = line.slice(0, -1);
      lines[i] = line;
    }
    if (matcher.line.test(line)) hits.push(i);
  }
  if (hits.length === 0) return { kind: 'none' };
  const out: ResultLine[] = [];
  let next = 0; // the first line index not yet emitted
  for (const [k, hit] of hits.entries()) {
    const from = Math.max(next, hit - context);
    for (let i = from; i < hit; i++)
      out.push({ n: i + 1, text: shown(stripCr(lines[i]!), matcher.line), match: false });
    if (hit >= next) out.push({ n: hit + 1, text: shown(lines[hit]!, matcher.line), match: true });
    const to = Math.min(lines.length - 1, hit + context);
    // Context after a hit stops at the next hit, which is emitted as a match.
    const nextHit = hits[k + 1] ?? Number.POSITIVE_INFINITY;
    for (let i = hit + 1; i <= to && i < nextHit; i++) {
      out.push({ n: i + 1, text: shown(stripCr(lines[i]!), matcher.line), match: false });
    }
    next = Math.min(to, nextHit - 1) + 1;
  }
  return { kind: 'lines', lines: out, matches: hits.length };
}

/**
 * The lines of `text` (no CR in it) that the pattern matches alone, found by the whole-text pattern:
 * a line that matches alone holds the start of a whole-text match searched from the line's start,
 * so after each match (tested against its line alone) the search goes on from the next line.
 */
function matchingLines(text: string, matcher: Matcher, budget: number): ScanOutcome {
  const out: ResultLine[] = [];
  const { whole } = matcher;
  whole.lastIndex = 0;
  let n = 0; // the number of the line starting at `start`, from 0
  let start = 0;
  while (out.length < budget) {
    const found = whole.exec(text);
    if (!found) break;
    // The empty piece after a final newline is not a line.
    if (found.index === text.length && text.length > 0 && text.endsWith('\n')) break;
    let end = text.indexOf('\n', start);
    while (end !== -1 && end < found.index) {
      n++;
      start = end + 1;
      end = text.indexOf('\n', start);
    }
    const line = text.slice(start, end === -1 ? text.length : end);
    if (matcher.line.test(line)) out.push({ n: n + 1, text: shown(line, matcher.line), match: true });
    if (end === -1) break;
    n++;
    start = end + 1;
    whole.lastIndex = start;
  }
  return out.length === 0 ? { kind: 'none' } : { kind: 'lines', lines: out, matches: out.length };
}

const stripCr = (line: string) => (line.endsWith('\r') ? line.slice(0, -1) : line);
