// The shell subset rune judges (docs/adr/0037-run-what-was-judged.md), parsed as POSIX sh parses
// it: simple commands of literal words joined by `|`, `&&`, `||`, `;` and newlines, with file
// redirections and descriptor duplications. Anything else — expansions, substitutions, compound
// commands, here documents, background jobs, bash-only syntax — is a hazard that ends the parse,
// so nothing the parser does not model can be auto-allowed. The commands come back with the text
// rune runs instead of the model's: every word single-quoted, only the operators listed here.
// One pass, no recursion; pure.
import type { ProgramJudgement } from './programs/types.ts';
import { readWord, type WordToken } from './shell-words.ts';

export interface Redirect {
  /** The descriptor redirected: 0 for `<`, 1 for `>` unless a digit precedes the operator. */
  fd: number;
  operator: '<' | '>' | '>>' | '<&' | '>&';
  /** The file (after quote removal), or the descriptor of a duplication (`1`, `-`). */
  target: string;
  /** The redirection writes (or truncates) its target. */
  writes: boolean;
  /** `2>&1`, `>&-`: duplicates or closes a descriptor and opens no file. */
  dup: boolean;
  /** The command (index in `commands`) it belongs to. */
  command: number;
}

export interface SimpleCommand {
  argv: string[];
  /** An unquoted `*`, `?` or bracket expression appears: the shell expands it into file names. */
  globbed: boolean;
  /** Per argv index: that word holds an unquoted glob. */
  globs: boolean[];
  redirects: Redirect[];
  /** The command as rune runs it. */
  text: string;
  /** The operator before it (`;` stands for a newline too); none for the first command. */
  connector?: Connector;
  /** What the program's rules say it does (filled in by shell-parser.ts). */
  program?: ProgramJudgement;
}

export type ShellAnalysis =
  | {
      ok: true;
      commands: SimpleCommand[];
      redirects: Redirect[];
      /** Constructs rune does not judge; the first one ended the parse. */
      hazards: string[];
      /** The whole line as rune runs it when it is auto-allowed. */
      script: string;
    }
  | { ok: false; error: string };

/** Longer lines are refused unread: judging stays far below a blocked run loop (bench/policy.mjs). */
export const MAX_COMMAND_CHARS = 32 * 1024;

/** Reserved words in command position, by what they start. */
const RESERVED = new Map<string, string>([
  ...['if', 'then', 'elif', 'else', 'fi'].map((word) => [word, 'an if statement'] as const),
  ...['while', 'until', 'for', 'select', 'do', 'done'].map((word) => [word, 'a loop'] as const),
  ['case', 'a case statement'],
  ['esac', 'a case statement'],
  ['{', 'a command group { … }'],
  ['}', 'a command group { … }'],
  ['!', 'a negated command (!)'],
  ['function', 'a function definition'],
  ['[[', 'a test expression [[ … ]]'],
  [']]', 'a test expression [[ … ]]'],
  ['time', 'time (a reserved word in bash)'],
  ['coproc', 'a coprocess (bash)'],
]);

const CONTROL = /[\0-\x08\x0b-\x1f\x7f]/;
const CONTROL_NAMES: Record<string, string> = {
  '\r': 'carriage return (CR)',
  '\f': 'form feed (FF)',
  '\v': 'vertical tab (VT)',
  '\0': 'NUL',
};

export type Connector = '&&' | '||' | '|' | ';';

export function parseShellSyntax(text: string): ShellAnalysis {
  if (text.length > MAX_COMMAND_CHARS) {
    return {
      ok: false,
      error: `the command is ${text.length} characters long; rune judges at most ${MAX_COMMAND_CHARS} (split it, or put long input in a file)`,
    };
  }
  const control = CONTROL.exec(text);
  if (control) {
    const ch = control[0];
    const name = CONTROL_NAMES[ch] ?? `U+${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
    return {
      ok: false,
      error: `the command holds a control character, ${name}, at position ${control.index}; shells and rune's parser could read it differently`,
    };
  }
  return new LineParser(text).run();
}

class LineParser {
  private at = 0;
  private readonly commands: SimpleCommand[] = [];
  private readonly redirects: Redirect[] = [];
  private script = '';
  private words: WordToken[] = [];
  private own: Redirect[] = [];
  private redirectTexts: string[] = [];
  /** The connector before the current command (`&&`, `||`, `|`) needs a command after it. */
  private pending: Connector | undefined;
  /** The operator before the current command. */
  private connector: Connector | undefined;

  constructor(private readonly text: string) {}

  run(): ShellAnalysis {
    const { text } = this;
    while (this.at < text.length) {
      const ch = text[this.at]!;
      if (ch === ' ' || ch === '\t') this.at += 1;
      else if (ch === '\\' && text[this.at + 1] === '\n') this.at += 2;
      else if (ch === '#') {
        const newline = text.indexOf('\n', this.at);
        this.at = newline === -1 ? text.length : newline;
      } else {
        const stop = this.token(ch);
        if (stop) return stop;
      }
    }
    if (this.pending && this.empty()) return { ok: false, error: `the command ends after "${this.pending}"` };
    if (!this.empty()) {
      const hazard = this.endCommand();
      if (hazard) return this.stop(hazard);
    }
    return this.result([]);
  }

  /** One operator, redirection or word at `this.at`; a result ends the parse. */
  private token(ch: string): ShellAnalysis | undefined {
    const { text } = this;
    const two = text.slice(this.at, this.at + 2);
    if (ch === '\n' || ch === ';' || ch === '|' || ch === '&') {
      const hazard = OPERATOR_HAZARDS[text.slice(this.at, this.at + 3)] ?? OPERATOR_HAZARDS[two];
      if (hazard) return this.stop(hazard);
      if (ch === '&' && two !== '&&') return this.stop('a background job (&)');
      const op: Connector | '\n' = two === '&&' || two === '||' ? two : (ch as '|' | ';' | '\n');
      this.at += op.length;
      return this.separate(op);
    }
    if (ch === '(') return this.stop('a subshell ( … ), arithmetic (( … )) or a function definition');
    if (ch === ')') return { ok: false, error: 'an unmatched ")"' };
    if (ch === '<' || ch === '>') return this.redirect(undefined);
    const { end, result } = readWord(text, this.at);
    this.at = end;
    if ('error' in result) return { ok: false, error: result.error };
    if ('hazard' in result) return this.refuse(result);
    const next = text[this.at];
    if ((next === '<' || next === '>') && result.word.plain) {
      if (/^\d$/.test(result.word.value)) return this.redirect(Number(result.word.value));
      if (/^\d+$/.test(result.word.value))
        return this.stop('a descriptor number above 9 (dash reads only one digit)');
      if (/^\{[A-Za-z_]\w*\}$/.test(result.word.value))
        return this.stop('a {name} descriptor redirection (bash only)');
    }
    const hazard = this.addWord(result.word);
    return hazard ? this.stop(hazard) : undefined;
  }

  private addWord(word: WordToken): string | undefined {
    if (this.words.length === 0) {
      const reserved = word.plain ? RESERVED.get(word.value) : undefined;
      if (reserved) return reserved;
      if (word.equals > 0 && /^[A-Za-z_]\w*(\[.*\])?\+?$/s.test(word.value.slice(0, word.equals))) {
        return 'a variable assignment';
      }
      if (word.glob) return 'a glob in the command name';
    }
    this.words.push(word);
    return undefined;
  }

  private redirect(fd: number | undefined): ShellAnalysis | undefined {
    const { text } = this;
    const rest = text.slice(this.at, this.at + 3);
    if (rest[1] === '(') return this.stop('process substitution <( … ) or >( … )');
    for (const [prefix, hazard] of REDIRECT_HAZARDS) if (rest.startsWith(prefix)) return this.stop(hazard);
    const op = REDIRECT_OPERATORS.find((candidate) => rest.startsWith(candidate))!;
    this.at += op.length;
    while (text[this.at] === ' ' || text[this.at] === '\t' || text.startsWith('\\\n', this.at)) {
      this.at += text[this.at] === '\\' ? 2 : 1;
    }
    const start = text[this.at];
    if (start === undefined || '\n|&;()<>'.includes(start)) {
      return { ok: false, error: `a redirection "${op}" without a target` };
    }
    if (start === '#')
      return { ok: false, error: `a redirection target starting with "#" (a comment to sh)` };
    const { end, result } = readWord(text, this.at);
    this.at = end;
    if ('error' in result) return { ok: false, error: result.error };
    if ('hazard' in result) return this.refuse(result);
    const { word } = result;
    const operator = op === '>|' ? '>' : (op as Redirect['operator']);
    const dup = operator === '<&' || operator === '>&';
    if (dup && !(word.plain && /^(\d|-)$/.test(word.value))) {
      return this.stop(
        /^\d+$/.test(word.value)
          ? 'a descriptor number above 9 (dash reads only one digit)'
          : `${op} FILE (bash sends both outputs to FILE, dash refuses it; write > FILE 2>&1)`,
      );
    }
    if (word.glob) return this.stop('a glob in a redirection');
    this.own.push({
      fd: fd ?? (operator.startsWith('<') ? 0 : 1),
      operator,
      target: word.value,
      writes: operator === '>' || operator === '>>',
      dup,
      command: this.commands.length,
    });
    const shown = fd === undefined ? '' : String(fd);
    this.redirectTexts.push(`${shown}${operator}${dup ? word.value : word.text}`);
    return undefined;
  }

  private empty(): boolean {
    return this.words.length === 0 && this.own.length === 0;
  }

  private separate(op: Connector | '\n'): ShellAnalysis | undefined {
    if (this.empty()) {
      // Blank lines are fine, also after `&&`, `||` and `|`, where sh reads on.
      if (op === '\n') return undefined;
      return { ok: false, error: `"${op}" without a command before it` };
    }
    const hazard = this.endCommand();
    if (hazard) return this.stop(hazard);
    this.script += op === '\n' || op === ';' ? '; ' : ` ${op} `;
    this.pending = op === '\n' || op === ';' ? undefined : op;
    this.connector = op === '\n' ? ';' : op;
    return undefined;
  }

  /** Closes the current command; a hazard when it has redirections but no words (unless `stop` asks). */
  private endCommand(wordless = false): string | undefined {
    if (this.words.length === 0 && !wordless) {
      return 'a redirection without a command (write `: > FILE` or `true > FILE`)';
    }
    const texts = this.words.map((word, index) =>
      // A word starting with a glob runs as ./WORD: no file name it expands to can become an option.
      index > 0 && word.glob && '*?['.includes(word.text[0]!) ? `./${word.text}` : word.text,
    );
    const command: SimpleCommand = {
      argv: this.words.map((word) => word.value),
      globs: this.words.map((word) => word.glob),
      globbed: this.words.some((word) => word.glob),
      redirects: this.own,
      text: [...texts, ...this.redirectTexts].join(' '),
      ...(this.connector ? { connector: this.connector } : {}),
    };
    this.commands.push(command);
    this.redirects.push(...this.own);
    this.script += command.text;
    this.words = [];
    this.own = [];
    this.redirectTexts = [];
    return undefined;
  }

  /** Ends the parse at a hazard; the words read so far are still judged (paths, the floor). */
  private stop(hazard: string): ShellAnalysis {
    if (!this.empty()) this.endCommand(true);
    return this.result([hazard]);
  }

  /** A word rune does not judge: noted, and the parse reads on when it knows where the word ends. */
  private refuse(result: { hazard: string; complete?: boolean }): ShellAnalysis | undefined {
    if (!result.complete) return this.stop(result.hazard);
    if (!this.noted.includes(result.hazard)) this.noted.push(result.hazard);
    return undefined;
  }

  /** Hazards of words the parse read past. */
  private readonly noted: string[] = [];

  private result(hazards: string[]): ShellAnalysis {
    return {
      ok: true,
      commands: this.commands,
      redirects: this.redirects,
      hazards: [...new Set([...this.noted, ...hazards])],
      script: this.script.replace(/; $/, ''),
    };
  }
}

/** Operators sh and bash read differently, or that start what rune does not judge. */
const OPERATOR_HAZARDS: Record<string, string> = {
  ';;': 'a case statement',
  ';&': 'a case statement',
  '|&': '|& (bash pipes stderr too; dash runs the left side in the background)',
  '&>': '&> (bash writes both outputs to the file; dash runs the command in the background); write > FILE 2>&1',
  '&>>': '&>> (bash only); write >> FILE 2>&1',
};

const REDIRECT_HAZARDS: [string, string][] = [
  ['<<<', 'a here string (<<<)'],
  ['<<', 'a here document'],
  ['<>', 'a read-write redirection <>'],
];

/** Longest first. `>|` is `>` without noclobber, which rune never sets. */
const REDIRECT_OPERATORS = ['>>', '>|', '>&', '<&', '>', '<'];
