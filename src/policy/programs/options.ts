// Command-line options read the way getopt_long (GNU tools), git's parse-options and argparse read
// them: bundled short options (`-uo FILE`, `-xIsh`), a short option's value glued on or in the next
// word, `--name=value` or `--name value`, and any unique prefix of a long option (`--recu`). What
// a rule does not know is reported, never guessed at: an ambiguous prefix, an unknown option.

/** none: a flag; value: takes the next word when nothing is glued on; glued: takes only a glued value (`-iSUF`, `--opt=v`). */
export type Arity = 'none' | 'value' | 'glued';

export interface OptionSpec {
  /** Short options by letter. */
  short?: Readonly<Record<string, Arity>>;
  /** Long options by name, without the dashes. */
  long?: Readonly<Record<string, Arity>>;
  /** A unique prefix of a long option stands for it (getopt_long, git, argparse); default true. */
  abbreviations?: boolean;
  /** The first operand ends the options (POSIX getopt, git's top level); default false (GNU permutes). */
  stopAtOperand?: boolean;
}

export interface ParsedOption {
  /** The short letter or the full long name (after resolving an abbreviation). */
  name: string;
  value?: string;
  /** The word it came from, for messages. */
  word: string;
}

export interface ParsedArgs {
  options: ParsedOption[];
  operands: string[];
  /** Options the spec does not know (`-q`, `--frob`), as written. */
  unknown: string[];
  /** A long option whose prefix matches several known ones: the program refuses it, so do we. */
  ambiguous: string[];
  /** Words after the last option when parsing stopped at an operand (`stopAtOperand`). */
  rest: string[];
}

/**
 * A spec in getopt's notation: `short` is an optstring (`ab:c::` — b takes a value, c only a glued
 * one), `long` names separated by blanks (`name=` takes a value, `name=?` only `--name=value`).
 */
export function getopt(short: string, long = '', extra: Omit<OptionSpec, 'short' | 'long'> = {}): OptionSpec {
  const shortSpec: Record<string, Arity> = {};
  for (const [, letter, colons] of short.matchAll(/([^:])(:{0,2})/g)) {
    shortSpec[letter!] = colons === ':' ? 'value' : colons === '::' ? 'glued' : 'none';
  }
  const longSpec: Record<string, Arity> = {};
  for (const entry of long.split(/\s+/).filter(Boolean)) {
    const [name = '', arity] = entry.split(/(?==)/);
    longSpec[name] = arity === '=' ? 'value' : arity === '=?' ? 'glued' : 'none';
  }
  return { short: shortSpec, long: longSpec, ...extra };
}

/** The spec with more options. */
export function extend(spec: OptionSpec, short: string, long = ''): OptionSpec {
  const more = getopt(short, long);
  return { ...spec, short: { ...spec.short, ...more.short }, long: { ...spec.long, ...more.long } };
}

/** Resolves a long option name: exact, else the one known name it is a prefix of. */
export function resolveLong(
  name: string,
  long: Readonly<Record<string, Arity>>,
  abbreviations = true,
): { name: string } | { ambiguous: string[] } | undefined {
  if (Object.hasOwn(long, name)) return { name };
  if (!abbreviations || name === '') return undefined;
  const candidates = Object.keys(long).filter((known) => known.startsWith(name));
  if (candidates.length === 1) return { name: candidates[0]! };
  return candidates.length > 1 ? { ambiguous: candidates } : undefined;
}

/**
 * Splits `args` (argv without the program) into options and operands. A word the shell globs is
 * always an operand: rune runs it as `./WORD` when it starts with the glob, so no file name it
 * expands to can become an option.
 */
export function parseOptions(
  args: readonly string[],
  spec: OptionSpec,
  globs: readonly boolean[] = [],
): ParsedArgs {
  const short = spec.short ?? {};
  const long = spec.long ?? {};
  const out: ParsedArgs = { options: [], operands: [], unknown: [], ambiguous: [], rest: [] };
  let index = 0;
  while (index < args.length) {
    const word = args[index]!;
    index += 1;
    if (word === '--') {
      out.operands.push(...args.slice(index));
      break;
    }
    if (globs[index - 1] || !word.startsWith('-') || word === '-') {
      if (spec.stopAtOperand) {
        out.rest = args.slice(index - 1);
        break;
      }
      out.operands.push(word);
      continue;
    }
    if (word.startsWith('--')) {
      index = readLong(word, args, index, long, spec.abbreviations ?? true, out);
      continue;
    }
    index = readShortBundle(word, args, index, short, out);
  }
  return out;
}

function readLong(
  word: string,
  args: readonly string[],
  index: number,
  long: Readonly<Record<string, Arity>>,
  abbreviations: boolean,
  out: ParsedArgs,
): number {
  const eq = word.indexOf('=');
  const written = eq === -1 ? word.slice(2) : word.slice(2, eq);
  const glued = eq === -1 ? undefined : word.slice(eq + 1);
  const resolved = resolveLong(written, long, abbreviations);
  if (resolved === undefined) {
    out.unknown.push(word);
    return index;
  }
  if ('ambiguous' in resolved) {
    out.ambiguous.push(word);
    return index;
  }
  const arity = long[resolved.name]!;
  if (glued !== undefined) out.options.push({ name: resolved.name, value: glued, word });
  else if (arity === 'value' && index < args.length) {
    out.options.push({ name: resolved.name, value: args[index]!, word });
    return index + 1;
  } else out.options.push({ name: resolved.name, word });
  return index;
}

function readShortBundle(
  word: string,
  args: readonly string[],
  index: number,
  short: Readonly<Record<string, Arity>>,
  out: ParsedArgs,
): number {
  for (let at = 1; at < word.length; at++) {
    const letter = word[at]!;
    const arity = short[letter];
    if (arity === undefined) {
      out.unknown.push(`-${letter}`);
      continue;
    }
    if (arity === 'none') {
      out.options.push({ name: letter, word });
      continue;
    }
    const glued = word.slice(at + 1);
    if (glued !== '' || arity === 'glued') {
      out.options.push({ name: letter, ...(glued !== '' ? { value: glued } : {}), word });
      return index;
    }
    if (index < args.length) {
      out.options.push({ name: letter, value: args[index]!, word });
      return index + 1;
    }
    out.options.push({ name: letter, word });
    return index;
  }
  return index;
}

/** The options named (short letters or long names), in order. */
export function named(parsed: ParsedArgs, ...names: string[]): ParsedOption[] {
  return parsed.options.filter((option) => names.includes(option.name));
}
