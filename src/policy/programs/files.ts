// Programs that create, change, move or remove the files their arguments name (coreutils and
// friends): each rule says which words are written, so the decision can hold them to the writable
// folders. Options are read as GNU getopt_long reads them (options.ts).
import { extend, getopt, named, type OptionSpec, parseOptions } from './options.ts';
import { type CommandWords, judgement, type ProgramJudgement, refuse } from './types.ts';

export type Rule = (words: CommandWords) => ProgramJudgement;

export function parseArgs(words: CommandWords, spec: OptionSpec) {
  return parseOptions(words.argv.slice(1), spec, words.globs.slice(1));
}

/** Every operand is written (created, changed or removed); `reads` names options whose value is read. */
function operandsWritten(spec: OptionSpec, ...reads: string[]): Rule {
  return (words) => {
    const parsed = parseArgs(words, spec);
    const read = named(parsed, ...reads).map((option) => option.value ?? '');
    return judgement({ writes: parsed.operands, reads: read.filter(Boolean) });
  };
}

const CP = getopt(
  'abdfHilLnPpRrsS:t:TuvxZ',
  `archive attributes-only backup=? copy-contents debug dereference force interactive link no-clobber
   no-dereference preserve=? no-preserve= parents recursive reflink=? remove-destination sparse=
   strip-trailing-slashes symbolic-link suffix= target-directory= no-target-directory update=?
   one-file-system context=? keep-directory-symlink exchange help version verbose relative logical
   physical`,
);
const INSTALL = extend(
  CP,
  'Cc:Dg:m:o:',
  'compare directory group= mode= owner= preserve-timestamps strip strip-program=',
);

/** cp, mv, ln, install: a destination (last operand or -t DIR) and sources; mv also removes its sources. */
function copyLike(program: 'cp' | 'mv' | 'ln' | 'install'): Rule {
  return (words) => {
    const parsed = parseArgs(words, program === 'install' ? INSTALL : CP);
    if (program === 'install' && named(parsed, 's', 'strip', 'strip-program').length > 0) {
      return refuse('--strip runs the strip program');
    }
    if (program === 'install' && named(parsed, 'd', 'directory').length > 0) {
      return judgement({ writes: parsed.operands });
    }
    const target = named(parsed, 't', 'target-directory').at(-1)?.value;
    const operands = parsed.operands;
    let destination: string[];
    let sources: string[];
    if (target !== undefined) {
      destination = [target];
      sources = operands;
    } else if (operands.length >= 2) {
      destination = [operands.at(-1)!];
      sources = operands.slice(0, -1);
    } else {
      // `ln TARGET` links in the working directory; cp and mv with one operand fail.
      destination = program === 'ln' && operands.length === 1 ? ['.'] : [];
      sources = operands;
    }
    const recursive = named(parsed, 'r', 'R', 'a', 'recursive', 'archive').length > 0;
    return judgement({
      writes: program === 'mv' ? [...destination, ...sources] : destination,
      trees: recursive && program === 'cp' ? sources : [],
    });
  };
}

/** chmod's `-w`, `-x`, `-rwx` are modes, not options. */
const MODE_WORD = /^-[rwxXst]+$/;
const OWNER = getopt(
  'cfvRhHLP',
  'changes silent quiet recursive reference= preserve-root no-preserve-root dereference no-dereference from= help version verbose',
);

/** chmod MODE FILE…, chown OWNER FILE…: the first operand is no file, unless --reference names one. */
function firstOperandIsNoFile(words: CommandWords): ProgramJudgement {
  const keep = words.argv.map((arg, index) => index === 0 || !MODE_WORD.test(arg));
  const mode = keep.includes(false);
  const parsed = parseArgs(
    {
      argv: words.argv.filter((_, index) => keep[index]),
      globs: words.globs.filter((_, index) => keep[index]),
    },
    OWNER,
  );
  const reference = named(parsed, 'reference').map((option) => option.value ?? '');
  const files = reference.length > 0 || mode ? parsed.operands : parsed.operands.slice(1);
  return judgement({ writes: files, reads: reference });
}

function dd(words: CommandWords): ProgramJudgement {
  const writes: string[] = [];
  const reads: string[] = [];
  for (const arg of words.argv.slice(1)) {
    if (arg.startsWith('of=')) writes.push(arg.slice(3));
    else if (arg.startsWith('if=')) reads.push(arg.slice(3));
  }
  return judgement({ writes, reads });
}

const SPLIT = getopt(
  'a:b:C:l:n:t:dxeu',
  `suffix-length= additional-suffix= bytes= line-bytes= lines= number= separator= numeric-suffixes=?
   hex-suffixes=? elide-empty-files unbuffered filter= help version verbose`,
);

function split(words: CommandWords): ProgramJudgement {
  const parsed = parseArgs(words, SPLIT);
  if (named(parsed, 'filter').length > 0) return refuse('--filter runs a shell command');
  return judgement({ writes: [`${parsed.operands[1] ?? 'x'}aa`] });
}

const UNIQ = getopt(
  'f:s:w:cdDiuz',
  `skip-fields= skip-chars= check-chars= all-repeated=? group=? count repeated ignore-case unique
   zero-terminated help version`,
);

export const FILE_RULES: Readonly<Record<string, Rule>> = {
  cp: copyLike('cp'),
  mv: copyLike('mv'),
  ln: copyLike('ln'),
  install: copyLike('install'),
  tee: operandsWritten(getopt('aip', 'append ignore-interrupts output-error=? help version')),
  rm: operandsWritten(
    getopt(
      'fiIrRdv',
      'force interactive=? one-file-system no-preserve-root preserve-root=? recursive dir help version verbose',
    ),
  ),
  rmdir: operandsWritten(getopt('pv', 'ignore-fail-on-non-empty parents help version verbose')),
  mkdir: operandsWritten(getopt('m:pvZ', 'mode= parents context=? help version verbose')),
  touch: operandsWritten(
    getopt('acd:fhmr:t:', 'no-create date= no-dereference reference= time= help version'),
    'r',
    'reference',
  ),
  truncate: operandsWritten(
    getopt('cor:s:', 'no-create io-blocks reference= size= help version'),
    'r',
    'reference',
  ),
  shred: operandsWritten(
    getopt('fn:s:uvxz', 'force iterations= random-source= size= remove=? exact zero help version verbose'),
    'random-source',
  ),
  unlink: operandsWritten(getopt('', 'help version')),
  chmod: firstOperandIsNoFile,
  chown: firstOperandIsNoFile,
  chgrp: firstOperandIsNoFile,
  dd,
  split,
  uniq: (words) => judgement({ writes: parseArgs(words, UNIQ).operands.slice(1, 2) }),
};
