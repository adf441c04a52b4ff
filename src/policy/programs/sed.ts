// sed: the options read as GNU sed reads them, and the script read command by command as GNU sed
// reads it (addresses, blocks, labels, a/i/c text to the end of the line, s and y with any
// delimiter). `e` and the `e` flag run commands and are refused; `w`, `W` and the `w` flag write
// files and `r`, `R` read them, which the decision judges like any other write or read.
import { parseArgs, type Rule } from './files.ts';
import { getopt, named } from './options.ts';
import { type CommandWords, judgement, type ProgramJudgement, refuse } from './types.ts';

const SED = getopt(
  'nrsuzEi::e:f:l:',
  `quiet silent expression= file= in-place=? line-length= null-data zero-terminated regexp-extended
   separate sandbox unbuffered posix debug follow-symlinks binary help version`,
);

export interface SedScript {
  problem?: string;
  writes: string[];
  reads: string[];
}

export const sed: Rule = (words: CommandWords): ProgramJudgement => {
  const parsed = parseArgs(words, SED);
  const odd = parsed.unknown[0] ?? parsed.ambiguous[0];
  if (odd) return refuse(`${odd} is not an option rune knows`);
  if (named(parsed, 'f', 'file').length > 0)
    return refuse('-f reads the script from a file rune cannot check');
  const expressions = named(parsed, 'e', 'expression').map((option) => option.value ?? '');
  const [script, files] =
    expressions.length > 0
      ? [expressions.join('\n'), parsed.operands]
      : [parsed.operands[0] ?? '', parsed.operands.slice(1)];
  const checked = sedScript(script);
  if (checked.problem) return refuse(checked.problem);
  const inPlace = named(parsed, 'i', 'in-place').length > 0;
  return judgement({ writes: [...checked.writes, ...(inPlace ? files : [])], reads: checked.reads });
};

/** Reads a sed script; a problem when it runs commands or is something rune does not know. */
export function sedScript(text: string): SedScript {
  return new SedReader(text).read();
}

const SIMPLE_COMMANDS = '=dDgGhHnNpPxzF';

class SedReader {
  private at = 0;
  private depth = 0;
  private readonly writes: string[] = [];
  private readonly reads: string[] = [];

  constructor(private readonly text: string) {}

  read(): SedScript {
    const problem = this.commands();
    return { ...(problem ? { problem } : {}), writes: this.writes, reads: this.reads };
  }

  private commands(): string | undefined {
    const { text } = this;
    for (;;) {
      while (this.at < text.length && /[\s;]/.test(text[this.at]!)) this.at++;
      if (this.at >= text.length) break;
      if (text[this.at] === '#') {
        this.toEndOfLine();
        continue;
      }
      const addressed = this.address();
      if (addressed === 'bad') return 'script has an unterminated or malformed address';
      this.blanks();
      if (addressed && text[this.at] === ',') {
        this.at++;
        this.blanks();
        if (text[this.at] === '+' || text[this.at] === '~') {
          this.at++;
          this.digits();
        } else if (this.address() !== true) return 'script has a malformed address range';
      }
      this.blanks();
      while (text[this.at] === '!') {
        this.at++;
        this.blanks();
      }
      const problem = this.command(text[this.at++] ?? '');
      if (problem) return problem;
    }
    return this.depth > 0 ? 'script has an unmatched {' : undefined;
  }

  private command(command: string): string | undefined {
    switch (command) {
      case '{':
        this.depth++;
        return undefined;
      case '}':
        if (this.depth === 0) return 'script has an unmatched }';
        this.depth--;
        return this.end(command);
      case ':':
      case 'b':
      case 't':
      case 'T':
        this.blanks();
        // GNU sed ends a label at a blank or `;`.
        while (this.at < this.text.length && !/[\s;]/.test(this.text[this.at]!)) this.at++;
        return this.end(command);
      case 'a':
      case 'i':
      case 'c':
        this.appendedText();
        return undefined;
      case 's':
      case 'y':
        return this.substitute(command);
      case 'r':
      case 'R':
        this.blanks();
        this.reads.push(this.toEndOfLine());
        return undefined;
      case 'w':
      case 'W':
        this.blanks();
        this.writes.push(this.toEndOfLine());
        return undefined;
      case 'q':
      case 'Q':
      case 'l':
      case 'L':
        this.blanks();
        this.digits();
        return this.end(command);
      case 'e':
        return 'command "e" runs a shell command';
      default:
        if (command !== '' && SIMPLE_COMMANDS.includes(command)) return this.end(command);
        return `command "${command}" is not one rune judges (s, y, p, d, q, a, i, c, b, t, {}, labels, w, r and the like)`;
    }
  }

  /** After a command: blanks, then the end of the script, `;`, a newline, `}` or a comment. */
  private end(command: string): string | undefined {
    this.blanks();
    const next = this.text[this.at];
    if (next === undefined || ';\n}#'.includes(next)) return undefined;
    return `script has "${next}" after command "${command}"`;
  }

  private substitute(command: 's' | 'y'): string | undefined {
    const delimiter = this.text[this.at];
    if (!delimiter || delimiter === '\\' || delimiter === '\n') return `${command} command is malformed`;
    this.at++;
    if (!this.delimited(delimiter) || !this.delimited(delimiter)) return `${command} command is unterminated`;
    if (command === 'y') return this.end(command);
    while (this.at < this.text.length && /[gpiImM0-9e]/.test(this.text[this.at]!)) {
      if (this.text[this.at] === 'e') return 's flag "e" runs the pattern space as a command';
      this.at++;
    }
    if (this.text[this.at] === 'w') {
      this.at++;
      this.blanks();
      this.writes.push(this.toEndOfLine());
      return undefined;
    }
    return this.end(command);
  }

  /** An address: a line number, `first~step`, `$`, `/re/` or `\cREc` with I and M flags. */
  private address(): boolean | 'bad' {
    const { text } = this;
    const ch = text[this.at];
    if (ch !== undefined && /\d/.test(ch)) {
      this.digits();
      if (text[this.at] === '~') {
        this.at++;
        this.digits();
      }
      return true;
    }
    if (ch === '$') {
      this.at++;
      return true;
    }
    if (ch === '/' || ch === '\\') {
      const delimiter = ch === '\\' ? text[this.at + 1] : '/';
      this.at += ch === '\\' ? 2 : 1;
      if (!delimiter || delimiter === '\n' || !this.delimited(delimiter)) return 'bad';
      while (/[IM]/.test(text[this.at] ?? '')) this.at++;
      return true;
    }
    return false;
  }

  /** Up to and past the closing delimiter; a backslash escapes any character, the newline too. */
  private delimited(delimiter: string): boolean {
    while (this.at < this.text.length) {
      const ch = this.text[this.at]!;
      if (ch === '\\') {
        this.at += 2;
        continue;
      }
      this.at++;
      if (ch === delimiter) return true;
    }
    return false;
  }

  /** a, i, c: `a text`, `a\` and text on the next lines; a backslash before a newline goes on. */
  private appendedText(): void {
    this.blanks();
    if (this.text[this.at] === '\\') {
      this.at++;
      if (this.text[this.at] === '\n') this.at++;
    }
    while (this.at < this.text.length && this.text[this.at] !== '\n') {
      this.at += this.text[this.at] === '\\' ? 2 : 1;
    }
  }

  private toEndOfLine(): string {
    const newline = this.text.indexOf('\n', this.at);
    const end = newline === -1 ? this.text.length : newline;
    const line = this.text.slice(this.at, end);
    this.at = end;
    return line;
  }

  private blanks(): void {
    while (this.text[this.at] === ' ' || this.text[this.at] === '\t') this.at++;
  }

  private digits(): void {
    while (/\d/.test(this.text[this.at] ?? '')) this.at++;
  }
}
