// awk: the options of POSIX awk, gawk, mawk and busybox awk, and the program read by an awk
// lexer, so that a comparison (`$3 > 10`) is not mistaken for output redirection. What runs
// programs or reads files rune never saw is refused: system(), every `|` pipe (`|&` too),
// `getline <`, gawk's `@` (includes, extensions, indirect calls such as @f() with f = "system"),
// and ARGV/ARGC (which change the files read). `print > "FILE"` writes FILE, judged like any write;
// any other output target is refused.
import { parseArgs, type Rule } from './files.ts';
import { getopt, named } from './options.ts';
import { type CommandWords, judgement, type ProgramJudgement, refuse } from './types.ts';

const AWK = getopt(
  'F:v:f:e:E:i:l:o::p::d::D::W:bcCgnNPrsStVMOL::h',
  `field-separator= assign= file= source= exec= include= load= pretty-print=? profile=? dump-variables=?
   debug=? characters-as-bytes traditional copyright gen-pot non-decimal-data use-lc-numeric posix
   re-interval sandbox lint-old version bignum optimize no-optimize lint=? csv help`,
);

/** Options that read program text rune cannot see, load code, or write files of their own. */
const AWK_REFUSED =
  'f file E exec i include l load o pretty-print p profile d dump-variables D debug W'.split(' ');

export const awk: Rule = (words: CommandWords): ProgramJudgement => {
  const parsed = parseArgs(words, AWK);
  const odd = parsed.unknown[0] ?? parsed.ambiguous[0];
  if (odd) return refuse(`${odd} is not an option rune knows`);
  const hit = named(parsed, ...AWK_REFUSED)[0];
  if (hit) return refuse(`${hit.word} reads a program file, loads code or writes files of its own`);
  const sources = named(parsed, 'e', 'source').map((option) => option.value ?? '');
  const program = sources.length > 0 ? sources.join('\n') : (parsed.operands[0] ?? '');
  const checked = awkProgram(program);
  return checked.problem ? refuse(checked.problem) : judgement({ writes: checked.writes });
};

type Token = { kind: 'name' | 'number' | 'string' | 'regex' | 'op' | 'newline'; text: string };

/** After these a `/` starts a division; anywhere else a regular expression. */
function endsOperand(token: Token | undefined): boolean {
  if (!token) return false;
  if (token.kind === 'number' || token.kind === 'string' || token.kind === 'regex') return true;
  if (token.kind === 'name')
    return !['print', 'printf', 'return', 'in', 'getline', 'case'].includes(token.text);
  return token.kind === 'op' && [')', ']', '$', '++', '--'].includes(token.text);
}

const OPERATORS = [
  '||',
  '&&',
  '|&',
  '>>',
  '<=',
  '>=',
  '==',
  '!=',
  '++',
  '--',
  '+=',
  '-=',
  '*=',
  '/=',
  '%=',
  '^=',
  '**',
  '!~',
];

/** The program's tokens, or a problem when it cannot be read the one way every awk reads it. */
function tokenize(text: string): Token[] | string {
  const tokens: Token[] = [];
  let at = 0;
  while (at < text.length) {
    const ch = text[at]!;
    if (ch === ' ' || ch === '\t' || (ch === '\\' && text[at + 1] === '\n')) {
      at += ch === '\\' ? 2 : 1;
    } else if (ch === '#') {
      while (at < text.length && text[at] !== '\n') at++;
    } else if (ch === '\n') {
      tokens.push({ kind: 'newline', text: ch });
      at++;
    } else if (ch === '"') {
      let end = at + 1;
      while (end < text.length && text[end] !== '"' && text[end] !== '\n') end += text[end] === '\\' ? 2 : 1;
      if (text[end] !== '"') return 'program has an unterminated string';
      tokens.push({ kind: 'string', text: text.slice(at + 1, end) });
      at = end + 1;
    } else if (ch === '/' && !endsOperand(tokens.at(-1))) {
      const end = regexEnd(text, at + 1);
      if (typeof end === 'string') return end;
      tokens.push({ kind: 'regex', text: text.slice(at + 1, end) });
      at = end + 1;
    } else if (/[A-Za-z_]/.test(ch)) {
      const name = /^[A-Za-z_]\w*/.exec(text.slice(at))![0];
      tokens.push({ kind: 'name', text: name });
      at += name.length;
    } else if (/[\d.]/.test(ch)) {
      const number = /^[\d.]+([eE][+-]?\d+)?|^./.exec(text.slice(at))![0];
      tokens.push({ kind: 'number', text: number });
      at += number.length;
    } else {
      const op = OPERATORS.find((candidate) => text.startsWith(candidate, at)) ?? ch;
      tokens.push({ kind: 'op', text: op });
      at += op.length;
    }
  }
  return tokens;
}

/** Where the regular expression from `start` ends; a `/` inside a bracket expression is refused (awks differ). */
function regexEnd(text: string, start: number): number | string {
  let at = start;
  let bracket = false;
  while (at < text.length && text[at] !== '\n') {
    const ch = text[at]!;
    if (ch === '\\') at += 2;
    else if (bracket) {
      if (ch === '/')
        return 'program has a / inside a bracket expression of a regular expression (awks read it differently)';
      if (ch === ']') bracket = false;
      at++;
    } else if (ch === '[') {
      bracket = true;
      at += text[at + 1] === '^' ? 2 : 1;
      if (text[at] === ']') at++;
    } else if (ch === '/') return at;
    else at++;
  }
  return 'program has an unterminated regular expression';
}

export interface AwkProgram {
  problem?: string;
  writes: string[];
}

/** Judges an awk program: a problem when it runs commands or reads files rune cannot see. */
export function awkProgram(text: string): AwkProgram {
  const tokens = tokenize(text);
  if (typeof tokens === 'string') return { problem: tokens, writes: [] };
  const writes: string[] = [];
  // Inside print or printf (to the end of the statement), `>` and `>>` at the statement's own
  // parenthesis depth redirect the output; anywhere else `>` compares.
  let printDepth: number | undefined;
  let depth = 0;
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index]!;
    const problem = tokenProblem(token, tokens, index);
    if (problem) return { problem, writes };
    if (token.kind === 'newline' || (token.kind === 'op' && (token.text === ';' || token.text === '}'))) {
      printDepth = undefined;
    } else if (token.kind === 'name' && (token.text === 'print' || token.text === 'printf'))
      printDepth = depth;
    else if (token.kind === 'op' && '([{'.includes(token.text)) depth++;
    else if (token.kind === 'op' && ')]'.includes(token.text)) depth--;
    else if (token.kind === 'op' && (token.text === '>' || token.text === '>>') && printDepth === depth) {
      const target = tokens[index + 1];
      const after = tokens[index + 2];
      const ends = !after || after.kind === 'newline' || [';', '}'].includes(after.text);
      if (target?.kind !== 'string' || !ends)
        return { problem: 'print > with a target that is not a plain "file name"', writes };
      writes.push(target.text);
      index++;
    }
  }
  return { writes };
}

function tokenProblem(token: Token, tokens: Token[], index: number): string | undefined {
  if (token.kind === 'op') {
    if (token.text === '|' || token.text === '|&')
      return `${token.text} runs a command (a pipe to or from it)`;
    if (token.text === '@') return '@ (gawk includes, extensions and indirect calls) is not judged';
    return undefined;
  }
  if (token.kind !== 'name') return undefined;
  if (token.text === 'system') return 'system() runs a command';
  if (token.text === 'ARGV' || token.text === 'ARGC') return `${token.text} changes which files awk reads`;
  if (token.text === 'getline' && readsFile(tokens, index + 1))
    return 'getline < FILE reads a file rune cannot check';
  return undefined;
}

/** After getline: an optional variable (`x`, `a[…]`, `$…`), then `<`. */
function readsFile(tokens: Token[], start: number): boolean {
  let at = start;
  const token = tokens[at];
  if (token?.kind === 'name' || (token?.kind === 'op' && token.text === '$')) {
    at++;
    if (token.text === '$') at++;
    if (tokens[at]?.text === '[' || tokens[at]?.text === '(') {
      const open = tokens[at]!.text;
      const close = open === '[' ? ']' : ')';
      let depth = 0;
      for (; at < tokens.length; at++) {
        if (tokens[at]!.text === open) depth++;
        else if (tokens[at]!.text === close && --depth === 0) break;
      }
      at++;
    }
  }
  return tokens[at]?.kind === 'op' && tokens[at]!.text === '<';
}
