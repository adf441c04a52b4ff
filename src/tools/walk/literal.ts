// The literal text every match of a regular expression must contain, found from the pattern alone:
// search_files checks a file's raw bytes for it (a memchr-speed Buffer.indexOf) before decoding the
// file or running the regex, which is what makes a search over node_modules as fast as grep.
// Conservative by design: whatever this cannot prove leaves the pre-check off, never wrong.

const CLASS_ESCAPES = new Set([...'dDwWsSbBpPkcxuv0123456789nrtf']);

/** Splits `pattern` at its top-level `|`; undefined when the brackets do not balance. */
function topLevelBranches(pattern: string): string[] | undefined {
  const branches: string[] = [];
  let depth = 0;
  let inClass = false;
  let start = 0;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (ch === ']') inClass = false;
      continue;
    }
    if (ch === '[') inClass = true;
    else if (ch === '(') depth++;
    else if (ch === ')') {
      depth--;
      if (depth < 0) return undefined;
    } else if (ch === '|' && depth === 0) {
      branches.push(pattern.slice(start, i));
      start = i + 1;
    }
  }
  if (depth !== 0 || inClass) return undefined;
  branches.push(pattern.slice(start));
  return branches;
}

/** The end of the group or class that starts at `start` (its closing bracket's index). */
function skipBracket(pattern: string, start: number): number {
  const open = pattern[start];
  let depth = 0;
  let inClass = open === '[';
  if (inClass) {
    // `[]` and `[^]` hold their first `]` as a member in other dialects; in JS `[]` is empty.
    for (let i = start + 1; i < pattern.length; i++) {
      if (pattern[i] === '\\') i++;
      else if (pattern[i] === ']') return i;
    }
    return pattern.length;
  }
  for (let i = start; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (ch === ']') inClass = false;
      continue;
    }
    if (ch === '[') inClass = true;
    else if (ch === '(') depth++;
    else if (ch === ')') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return pattern.length;
}

/** A quantifier at `i`: its length and whether it allows zero repetitions; undefined when none. */
function quantifierAt(pattern: string, i: number): { length: number; optional: boolean } | undefined {
  const ch = pattern[i];
  if (ch === '*' || ch === '?') return { length: 1, optional: true };
  if (ch === '+') return { length: 1, optional: false };
  if (ch === '{') {
    const match = /^\{(\d+)(,\d*)?\}/.exec(pattern.slice(i));
    if (match) return { length: match[0].length, optional: Number(match[1]) === 0 };
  }
  return undefined;
}

/** How many characters the escape at `i` spans: `\u0041`, `\u{1F600}`, `\x41`, `\cJ`, `\p{L}`, `\k<n>`, `\12`. */
function escapeLength(pattern: string, i: number): number {
  const kind = pattern[i + 1] ?? '';
  const rest = pattern.slice(i + 2);
  let extra = 0;
  if (kind === 'u') extra = (/^\{[0-9A-Fa-f]+\}/.exec(rest) ?? /^[0-9A-Fa-f]{4}/.exec(rest))?.[0].length ?? 0;
  else if (kind === 'x') extra = /^[0-9A-Fa-f]{2}/.exec(rest)?.[0].length ?? 0;
  else if (kind === 'c') extra = /^[A-Za-z]/.exec(rest)?.[0].length ?? 0;
  else if (kind === 'p' || kind === 'P') extra = /^\{[^}]*\}/.exec(rest)?.[0].length ?? 0;
  else if (kind === 'k') extra = /^<[^>]*>/.exec(rest)?.[0].length ?? 0;
  else if (/[0-9]/.test(kind)) extra = /^[0-9]*/.exec(rest)?.[0].length ?? 0;
  return 2 + extra;
}

/** The longest run of literal characters in one branch that every match of it contains. */
function longestLiteral(branch: string): string {
  let best = '';
  let run = '';
  const end = () => {
    if (run.length > best.length) best = run;
    run = '';
  };
  let i = 0;
  while (i < branch.length) {
    const ch = branch[i]!;
    let atom: string | undefined; // one literal character, or undefined for anything else
    let next = i + 1;
    if (ch === '\\') {
      const escaped = branch[i + 1];
      if (escaped === undefined) return '';
      next = i + escapeLength(branch, i);
      // `\.` `\(` `\\` `\/` …: the character itself. Letters and digits are classes, assertions,
      // control or Unicode escapes: not literal text.
      if (!/[A-Za-z0-9]/.test(escaped) && !CLASS_ESCAPES.has(escaped)) atom = escaped;
    } else if (ch === '[' || ch === '(') {
      next = skipBracket(branch, i) + 1;
    } else if (ch === '.' || ch === '^' || ch === '$' || ch === ')' || ch === ']') {
      atom = undefined;
    } else if (ch === '*' || ch === '+' || ch === '?') {
      // A quantifier with nothing before it: leave the pattern to the regex engine.
      return '';
    } else if (ch === '{' && quantifierAt(branch, i)) {
      return '';
    } else {
      atom = ch;
    }
    const quantifier = quantifierAt(branch, next);
    if (quantifier) {
      if (atom !== undefined && !quantifier.optional) {
        // `ab+`: the `b` is there at least once, but what follows is not next to it.
        run += atom;
      }
      end();
      next += quantifier.length;
      // A lazy or possessive marker after the quantifier.
      if (branch[next] === '?') next++;
    } else if (atom === undefined) {
      end();
    } else {
      run += atom;
    }
    i = next;
  }
  end();
  return best;
}

/**
 * Literal strings of which every match of `pattern` (JS syntax) contains at least one: one per
 * top-level alternative. Undefined when some alternative has no literal part (`\w+`, `(a|b)c`).
 */
export function requiredLiterals(pattern: string): string[] | undefined {
  const branches = topLevelBranches(pattern);
  if (!branches) return undefined;
  const literals: string[] = [];
  for (const branch of branches) {
    const literal = longestLiteral(branch);
    if (literal === '') return undefined;
    literals.push(literal);
  }
  return [...new Set(literals)];
}
