// Archivers and compressors: what they write (the archive, the folder they extract into, the
// files they replace), what trees they read, and the options that run a program of the caller's
// choosing. The compressors tar and unzip start themselves (gzip, xz, …) count as theirs.
import { parseArgs, type Rule } from './files.ts';
import { getopt, named } from './options.ts';
import { type CommandWords, judgement, type ProgramJudgement, refuse } from './types.ts';

const TAR = getopt(
  'Acdrtuxf:C:T:X:zjJZaI:vkmopPhOSWwb:F:g:GK:L:MN:RsUV:Bl',
  `create extract get list append update catenate concatenate diff compare delete file= directory=
   files-from= exclude-from= exclude= gzip gunzip bzip2 xz lzip lzma lzop zstd compress uncompress
   auto-compress use-compress-program= verbose keep-old-files keep-newer-files skip-old-files overwrite
   overwrite-dir unlink-first recursive-unlink touch no-same-owner same-owner preserve-permissions
   same-permissions no-same-permissions absolute-names dereference to-stdout to-command= sparse
   interactive confirmation blocking-factor= info-script= new-volume-script= listed-incremental=
   incremental starting-file= tape-length= multi-volume after-date= newer= newer-mtime= label=
   checkpoint=? checkpoint-action= index-file= rsh-command= rmt-command= force-local strip-components=
   transform= xform= wildcards no-wildcards anchored no-anchored null no-null one-file-system
   owner= group= mode= mtime= sort= format= posix numeric-owner totals=? warning= show-transformed-names
   exclude-vcs exclude-vcs-ignores exclude-caches exclude-backups record-size= ignore-zeros
   occurrence=? remove-files verify no-recursion recursion xattrs no-xattrs acls selinux help version`,
);

/** The old form `tar cfb ARCHIVE 20 files`: each letter's value is the next word, in order. */
function oldStyle(args: readonly string[]): string[] | undefined {
  const [first, ...rest] = args;
  if (first === undefined || first.startsWith('-')) return undefined;
  const out: string[] = [];
  for (const letter of first) {
    out.push(`-${letter}`);
    if (TAR.short?.[letter] === 'value' && rest.length > 0) out.push(rest.shift()!);
  }
  return [...out, ...rest];
}

const TAR_RUNS = [
  'to-command',
  'use-compress-program',
  'I',
  'checkpoint-action',
  'info-script',
  'F',
  'new-volume-script',
  'rsh-command',
  'rmt-command',
  'T',
  'files-from',
];

function tar(words: CommandWords): ProgramJudgement {
  const args = oldStyle(words.argv.slice(1));
  const parsed = parseArgs(args ? { argv: ['tar', ...args], globs: [] } : words, TAR);
  const runs = named(parsed, ...TAR_RUNS)[0];
  if (runs) return refuse(`${runs.word} runs a program or reads file names rune cannot check`);
  if (parsed.ambiguous.length > 0) return refuse(`${parsed.ambiguous[0]} is an ambiguous option`);
  const archive = named(parsed, 'f', 'file').at(-1)?.value;
  // `host:file` is a remote archive, reached through rsh.
  if (archive?.includes(':') && !archive.startsWith('/') && named(parsed, 'force-local').length === 0) {
    return refuse(`${archive} names a remote archive (tar runs rsh); add --force-local for a local file`);
  }
  const dir = named(parsed, 'C', 'directory').at(-1)?.value;
  const extract = named(parsed, 'x', 'extract', 'get').length > 0;
  if (extract && named(parsed, 'P', 'absolute-names').length > 0) {
    return refuse('-P extracts absolute names anywhere');
  }
  const creates = named(
    parsed,
    'c',
    'create',
    'r',
    'append',
    'u',
    'update',
    'A',
    'catenate',
    'concatenate',
    'delete',
  );
  const writes = [
    ...(creates.length > 0 && archive && archive !== '-' ? [archive] : []),
    ...(extract ? [dir ?? '.'] : []),
    ...named(parsed, 'g', 'listed-incremental', 'index-file').map((option) => option.value ?? ''),
  ];
  const under = (path: string) =>
    dir && !path.startsWith('/') && !path.startsWith('~') ? `${dir}/${path}` : path;
  return judgement({
    writes: writes.filter(Boolean),
    reads: [...(creates.length === 0 && archive && archive !== '-' ? [archive] : [])],
    trees: creates.length > 0 ? parsed.operands.map(under) : [],
  });
}

const ZIP = getopt('b:d:i:n:O:P:t:x:Z:0123456789AcDeFfgjJklLmoqrRSTuvVwXyz@', 'unzip-command= help version');

function zip(words: CommandWords): ProgramJudgement {
  const parsed = parseArgs(words, ZIP);
  if (words.argv.some((arg) => arg === '-TT' || arg.startsWith('--unzip-command'))) {
    return refuse('-TT runs a command to test the archive');
  }
  const [archive, ...files] = parsed.operands;
  const recursive = named(parsed, 'r', 'R').length > 0;
  return judgement({ writes: archive ? [archive] : [], trees: recursive ? files : [] });
}

const UNZIP = getopt('d:x:P:ZcfhlnopqtTuvVaLjCKMsXY', '');

function unzip(words: CommandWords): ProgramJudgement {
  const parsed = parseArgs(words, UNZIP);
  const toStdout = named(parsed, 'p', 'c', 'l', 't', 'v', 'Z').length > 0;
  return judgement({
    writes: toStdout ? [] : [named(parsed, 'd').at(-1)?.value ?? '.'],
    reads: parsed.operands.slice(0, 1),
  });
}

/** gzip, xz, bzip2, zstd, …: replace each file by its (de)compressed form unless writing to stdout. */
function compressor(short: string, long: string): Rule {
  const spec = getopt(short, long);
  return (words) => {
    const parsed = parseArgs(words, spec);
    const stdout = named(parsed, 'c', 'stdout', 'to-stdout', 't', 'test', 'l', 'list').length > 0;
    const output = named(parsed, 'o', 'output-dir-flat').map((option) => option.value ?? '');
    return judgement({ writes: stdout ? output : [...parsed.operands, ...output] });
  };
}

const GZIP = compressor(
  'cdfhklLnNqrS:tvV123456789',
  'stdout to-stdout decompress uncompress force help keep list license no-name name quiet recursive rsyncable suffix= synchronous test verbose version fast best',
);
const XZ = compressor(
  'zdtlkcfF:C:T:M:qvhHV0123456789e',
  'compress decompress uncompress test list keep stdout to-stdout force format= check= threads= memlimit= quiet verbose help long-help version extreme fast best suffix= single-stream no-sparse files= files0=',
);
const ZSTD = compressor(
  'zdcfklqrtvVhHo:D:T:M:B:0123456789#:',
  'compress decompress uncompress stdout force keep quiet verbose test rm output-dir-flat= format= ultra long=? fast=? threads= memory= patch-from= no-progress help version',
);

const PATCH = getopt(
  'bB:cd:D:eEfF:g:i:lnNo:p:r:RstTuvV:xY:z:Z',
  `backup prefix= context directory= ifdef= ed remove-empty-files force fuzz= get= input= ignore-whitespace
   normal forward output= strip= reject-file= reverse silent quiet batch set-time set-utc unified
   version-control= basename-prefix= suffix= dry-run posix binary merge=? help version verbose`,
);

function patch(words: CommandWords): ProgramJudgement {
  const parsed = parseArgs(words, PATCH);
  if (named(parsed, 'dry-run').length > 0) return judgement();
  // The patched files are named inside the patch, below the folder patch runs in (GNU patch refuses
  // absolute names and `..`), so that folder must be writable.
  const dir = named(parsed, 'd', 'directory').at(-1)?.value ?? '.';
  const outputs = named(parsed, 'o', 'output', 'r', 'reject-file').map((option) => option.value ?? '');
  return judgement({ writes: [dir, ...outputs, ...parsed.operands.slice(0, 1)].filter(Boolean) });
}

export const ARCHIVE_RULES: Readonly<Record<string, Rule>> = {
  tar,
  zip,
  unzip,
  gzip: GZIP,
  gunzip: GZIP,
  bzip2: GZIP,
  bunzip2: GZIP,
  xz: XZ,
  unxz: XZ,
  zstd: ZSTD,
  unzstd: ZSTD,
  patch,
};
