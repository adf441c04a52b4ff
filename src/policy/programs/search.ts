// Programs that read files and folders: which trees they walk (a recursive grep from a folder that
// holds a secret reads the secret), what they write on the side, and the options that make them
// run another program.
import { parseArgs } from './files.ts';
import { getopt, named, type ParsedArgs } from './options.ts';
import { type CommandWords, judgement, type ProgramJudgement, refuse } from './types.ts';

const GREP = getopt(
  'e:f:m:A:B:C:d:D:EFGPiyvwxcLloqsbHhnTZzrRaIUuV',
  `regexp= file= ignore-case no-ignore-case word-regexp line-regexp null-data no-messages invert-match
   version help max-count= byte-offset line-number line-buffered with-filename no-filename label=
   only-matching quiet silent binary-files= text directories= devices= recursive dereference-recursive
   include= exclude= exclude-from= exclude-dir= files-without-match files-with-matches count
   initial-tab null before-context= after-context= context=? color=? colour=? binary basic-regexp
   extended-regexp fixed-strings perl-regexp no-group-separator group-separator=`,
);

/** The operands after the pattern (the first operand, unless -e or -f gave one): the files searched. */
function searched(parsed: ParsedArgs, patternOptions: string[]): string[] {
  return named(parsed, ...patternOptions).length > 0 ? parsed.operands : parsed.operands.slice(1);
}

function grep(words: CommandWords): ProgramJudgement {
  const parsed = parseArgs(words, GREP);
  if (parsed.ambiguous.length > 0) return refuse(`${parsed.ambiguous[0]} is an ambiguous option`);
  // grep takes any unambiguous abbreviation of "recurse" for -d (`-d rec`); a shorter one is refused by grep.
  const recursive =
    named(parsed, 'r', 'R', 'recursive', 'dereference-recursive').length > 0 ||
    named(parsed, 'd', 'directories').some((option) => 'recurse'.startsWith(option.value ?? 'x'));
  const files = searched(parsed, ['e', 'f', 'regexp', 'file']);
  const reads = named(parsed, 'f', 'file', 'exclude-from').map((option) => option.value ?? '');
  return judgement({ reads, trees: recursive ? (files.length > 0 ? files : ['.']) : [] });
}

const RG = getopt(
  'A:B:C:d:E:e:f:g:j:M:m:r:T:t:0abcFHhiIlLnNopqsSuUvwxz',
  `pre= pre-glob= search-zip hostname-bin= regexp= file= glob= iglob= type= type-not= type-add=
   type-clear= ignore-file= max-depth= max-count= max-columns= max-filesize= replace= threads=
   context= before-context= after-context= encoding= engine= sort= sortr= colors= color= path-separator=
   context-separator= field-context-separator= field-match-separator= hyperlink-format= dfa-size-limit=
   regex-size-limit= files type-list generate= help version`,
);

function rg(words: CommandWords): ProgramJudgement {
  const parsed = parseArgs(words, RG);
  const runs = named(parsed, 'pre', 'z', 'search-zip', 'hostname-bin')[0];
  if (runs) return refuse(`${runs.word} runs a preprocessor or decompression program`);
  if (parsed.ambiguous.length > 0) return refuse(`${parsed.ambiguous[0]} is an ambiguous option`);
  const listing = named(parsed, 'files', 'type-list').length > 0;
  const files = listing ? parsed.operands : searched(parsed, ['e', 'f', 'regexp', 'file']);
  const reads = named(parsed, 'f', 'file', 'ignore-file').map((option) => option.value ?? '');
  return judgement({ reads, trees: files.length > 0 ? files : ['.'] });
}

const DIFF = getopt(
  'abBcC:dD:eEfF:iI:lnNpqrsS:tTuU:vwWxX:y',
  `normal brief report-identical-files context=? unified=? ed rcs side-by-side width= expand-tabs
   initial-tab suppress-blank-empty show-c-function show-function-line= label= ignore-case
   ignore-file-name-case no-ignore-file-name-case ignore-tab-expansion ignore-trailing-space
   ignore-space-change ignore-all-space ignore-blank-lines ignore-matching-lines= text
   strip-trailing-cr recursive new-file unidirectional-new-file exclude= exclude-from= starting-file=
   from-file= to-file= minimal speed-large-files horizon-lines= left-column suppress-common-lines
   color=? palette= line-format= old-line-format= new-line-format= unchanged-line-format=
   old-group-format= new-group-format= changed-group-format= unchanged-group-format= no-dereference
   help version`,
);

/** diff prints the files it compares: a folder operand reads the files in it (with -r, its tree). */
function diff(words: CommandWords): ProgramJudgement {
  const parsed = parseArgs(words, DIFF);
  if (parsed.ambiguous.length > 0) return refuse(`${parsed.ambiguous[0]} is an ambiguous option`);
  const compared = named(parsed, 'from-file', 'to-file').map((option) => option.value ?? '');
  const reads = named(parsed, 'X', 'exclude-from').map((option) => option.value ?? '');
  return judgement({ reads, trees: [...parsed.operands, ...compared].filter(Boolean) });
}

/** find's actions that run commands or read names from a file; writes are judged below. */
const FIND_REFUSED = new Set(['-exec', '-execdir', '-ok', '-okdir', '-files0-from']);
const FIND_WRITES = new Set(['-fprint', '-fprint0', '-fprintf', '-fls']);

function find(words: CommandWords): ProgramJudgement {
  const args = words.argv.slice(1);
  let index = 0;
  // -H -L -P -D debugopts -Olevel come before the starting points.
  while (index < args.length && /^-([HLP]|D|O\d*)$/.test(args[index]!)) index += args[index] === '-D' ? 2 : 1;
  const starts: string[] = [];
  while (index < args.length && !/^[-(!]/.test(args[index]!) && args[index] !== ')')
    starts.push(args[index++]!);
  const writes: string[] = [];
  for (; index < args.length; index++) {
    const arg = args[index]!;
    if (FIND_REFUSED.has(arg)) return refuse(`${arg} runs commands or reads file names rune cannot check`);
    if (FIND_WRITES.has(arg)) writes.push(args[index + 1] ?? '');
    if (arg === '-delete') writes.push(...(starts.length > 0 ? starts : ['.']));
  }
  return judgement({ writes: writes.filter(Boolean) });
}

const SORT = getopt(
  'bdfgiMhnRrVcCk:mo:st:T:uzS:',
  `ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting month-sort
   human-numeric-sort numeric-sort random-sort random-source= reverse sort= version-sort batch-size=
   check=? compress-program= debug files0-from= key= merge output= stable buffer-size= field-separator=
   temporary-directory= parallel= unique zero-terminated help version`,
);

function sort(words: CommandWords): ProgramJudgement {
  const parsed = parseArgs(words, SORT);
  const runs = named(parsed, 'compress-program', 'files0-from')[0];
  if (runs) return refuse(`${runs.word} runs a program or reads file names rune cannot check`);
  if (parsed.ambiguous.length > 0) return refuse(`${parsed.ambiguous[0]} is an ambiguous option`);
  return judgement({
    writes: named(parsed, 'o', 'output', 'T', 'temporary-directory').map((option) => option.value ?? ''),
    reads: named(parsed, 'random-source').map((option) => option.value ?? ''),
  });
}

const LESS = getopt(
  'b:h:j:k:o:O:p:P:t:T:x:y:z:',
  'lesskey-file= lesskey-src= log-file= LOG-FILE= tag= tag-file=',
);

function less(words: CommandWords): ProgramJudgement {
  const parsed = parseArgs(words, LESS);
  const hit = named(parsed, 'k', 'lesskey-file', 'lesskey-src', 'o', 'O', 'log-file', 'LOG-FILE')[0];
  if (hit) return refuse(`${hit.word} reads a key file or writes a log`);
  // `+cmd` runs a less command at start, and `!` and `|` commands run a shell.
  if (parsed.operands.some((word) => word.startsWith('+') && /[!|]/.test(word))) {
    return refuse('a +command with ! or | runs a shell');
  }
  return judgement();
}

const MAN = getopt(
  'C:d:D:e:fhHikl:L:m:M:p:P:r:R:S:s:t:T:wWX:Z',
  `config-file= pager= html=? preprocessor= gxditview=? browser= troff-device=? local-file manpath=
   help version`,
);

function man(words: CommandWords): ProgramJudgement {
  const parsed = parseArgs(words, MAN);
  const hit = named(
    parsed,
    'P',
    'pager',
    'H',
    'html',
    'p',
    'preprocessor',
    'X',
    'gxditview',
    'browser',
    'C',
    'config-file',
  )[0];
  if (hit) return refuse(`${hit.word} runs a program or reads a configuration`);
  return judgement();
}

export const SEARCH_RULES: Readonly<Record<string, (words: CommandWords) => ProgramJudgement>> = {
  grep,
  egrep: grep,
  fgrep: grep,
  rg,
  find,
  diff,
  sort,
  less,
  man,
  xxd: (words) => {
    const parsed = parseArgs(words, getopt('c:g:l:o:s:n:abCEeihipruv', 'help version'));
    return judgement({ writes: parsed.operands.slice(1, 2) });
  },
};
