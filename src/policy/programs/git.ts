// git, judged by what each subcommand can do. Only the subcommands listed here run (any other is
// an external `git-NAME` program, an alias, or one that runs programs by design: help, bisect,
// submodule, difftool, maintenance, for-each-repo, merge-index, remote-ext, …). Per subcommand:
// the options that start a program of the caller's choosing (an editor, a pager, gpg, an upload or
// receive pack, a transport helper `X::URL`) are refused, and the options and operands that name
// files written outside the repository (`-o`, `--output`, `--prefix`, marks files, a new
// repository or worktree) are returned as writes. Long options are matched as git's
// parse-options matches them: any unambiguous prefix (`--outp`) counts.
import {
  BUILTIN_STRATEGIES,
  bundle,
  checkoutIndex,
  clone,
  commit,
  config,
  formatPatch,
  init,
  mergeFile,
  noIndex,
  notes,
  optionValue,
  optionWords,
  pull,
  remote,
  tag,
  urls,
  worktree,
} from './git-operands.ts';
import { type CommandWords, judgement, type ProgramJudgement, refuse } from './types.ts';

/** Top-level options that change nothing rune judges. `-C DIR` is followed by directories.ts. */
const TOP_LEVEL_FLAGS = new Set([
  '-P',
  '--no-pager',
  '--no-replace-objects',
  '--no-lazy-fetch',
  '--no-optional-locks',
  '--no-advice',
  '--literal-pathspecs',
  '--glob-pathspecs',
  '--noglob-pathspecs',
  '--icase-pathspecs',
  '--version',
  '-v',
  '--html-path',
  '--man-path',
  '--info-path',
]);

interface Subcommand {
  /** Short letters that start a program (an editor, gpg, a pager, an upload pack). */
  refuseShort?: string;
  /** Long options (full names) that start a program or change configuration. */
  refuseLong?: string[];
  /** Short letters and long names whose value is a file or folder written. */
  writes?: { short?: string; long?: string[] };
  /** Long names whose value is a file read. */
  reads?: string[];
  /** Anything else this subcommand needs judged (its operands, sub-subcommands). */
  check?: (args: readonly string[]) => ProgramJudgement | undefined;
}

/** Refused after any subcommand: a pager, man, gpg, a program for the other side of a transfer. */
const ALWAYS_REFUSED = [
  'help',
  'upload-pack',
  'receive-pack',
  'exec',
  'ext-diff',
  'open-files-in-pager',
  'gpg-sign',
  'show-signature',
  'verify-signatures',
  'signed',
  'edit',
  'template',
  'unsafe-paths',
  'allow-unsafe-features',
  'edit-description',
  'edit-todo',
];

/** git options that are prefixes of refused ones (`--verify` of `--verify-signatures`). */
const REAL_OPTIONS = new Set(['verify', 'sign']);

const NONE: Subcommand = {};
// -p / -i ask hunk by hunk on standard input, and an `e` answer opens an editor that reads its
// commands from the same input (`printf 'e\\n:!id\\n' | git add -p`).
const PATCH: Subcommand = { refuseShort: 'p', refuseLong: ['patch'] };
const INTERACTIVE_ADD: Subcommand = { refuseShort: 'eip', refuseLong: ['patch', 'interactive'] };
const LOG_LIKE: Subcommand = { writes: { long: ['output'] } };

/**
 * merge, rebase, cherry-pick, revert: gpg with -S; an editor with -e or, after a conflict, with
 * --continue; a strategy other than git's own runs the program git-merge-NAME.
 */
function sequencer(
  extra: { refuseShort?: string; refuseLong?: string[]; strategyLetter?: boolean } = {},
): Subcommand {
  return {
    refuseShort: `eS${extra.refuseShort ?? ''}`,
    refuseLong: ['continue', ...(extra.refuseLong ?? [])],
    check: (args) => {
      const strategy = optionValue(args, extra.strategyLetter ? 's' : undefined, 'strategy');
      if (strategy !== undefined && !BUILTIN_STRATEGIES.has(strategy)) {
        return refuse(`with strategy "${strategy}" runs the program git-merge-${strategy}`);
      }
      return undefined;
    },
  };
}

/** `git stash [push|save] -p` asks hunk by hunk; `stash show -p` and `stash list -p` print a patch. */
function stash(args: readonly string[]): ProgramJudgement | undefined {
  const action = args.find((arg) => !arg.startsWith('-'));
  if (action !== undefined && action !== 'push' && action !== 'save') return undefined;
  // The judgement's reason starts with "stash ", which the caller adds again.
  const refused = judgeSubcommand('stash', PATCH, args).refused;
  return refused ? refuse(refused.slice('stash '.length)) : undefined;
}

export const GIT_SUBCOMMANDS: Readonly<Record<string, Subcommand>> = {
  add: INTERACTIVE_ADD,
  stage: INTERACTIVE_ADD,
  am: { refuseShort: 'Si', refuseLong: ['interactive'] },
  annotate: NONE,
  apply: NONE,
  archive: { refuseLong: ['remote'], writes: { short: 'o', long: ['output'] } },
  blame: NONE,
  branch: NONE,
  bundle: { check: bundle },
  'cat-file': NONE,
  'check-attr': NONE,
  'check-ignore': NONE,
  'check-mailmap': NONE,
  'check-ref-format': NONE,
  checkout: PATCH,
  'checkout-index': { check: checkoutIndex },
  cherry: NONE,
  'cherry-pick': sequencer(),
  clean: { refuseShort: 'i', refuseLong: ['interactive'] },
  clone: { refuseShort: 'cu', refuseLong: ['config'], check: clone },
  commit: { refuseShort: 'ecStp', refuseLong: ['reedit-message', 'patch', 'interactive'], check: commit },
  'commit-graph': NONE,
  'commit-tree': { refuseShort: 'S' },
  config: { check: config },
  'count-objects': NONE,
  describe: NONE,
  diff: { ...LOG_LIKE, check: noIndex },
  'diff-files': LOG_LIKE,
  'diff-index': LOG_LIKE,
  'diff-tree': LOG_LIKE,
  'fast-export': { writes: { long: ['export-marks'] }, reads: ['import-marks', 'import-marks-if-exists'] },
  'fast-import': {
    writes: { long: ['export-marks', 'export-pack-edges'] },
    reads: ['import-marks', 'import-marks-if-exists'],
  },
  fetch: { check: urls },
  'for-each-ref': NONE,
  'format-patch': {
    writes: { short: 'o', long: ['output-directory'] },
    reads: ['signature-file'],
    check: formatPatch,
  },
  fsck: NONE,
  gc: NONE,
  grep: { refuseShort: 'O' },
  'hash-object': NONE,
  init: { writes: { long: ['separate-git-dir'] }, check: init },
  'init-db': { writes: { long: ['separate-git-dir'] }, check: init },
  log: LOG_LIKE,
  'ls-files': NONE,
  'ls-remote': { refuseShort: 'u', check: urls },
  'ls-tree': NONE,
  merge: sequencer({ strategyLetter: true }),
  'merge-base': NONE,
  'merge-file': { check: mergeFile },
  'merge-tree': NONE,
  mktag: NONE,
  mktree: NONE,
  mv: NONE,
  'name-rev': NONE,
  notes: { check: notes },
  'pack-refs': NONE,
  prune: NONE,
  pull: { refuseShort: 'Se', check: pull },
  push: { check: urls },
  'range-diff': LOG_LIKE,
  'read-tree': NONE,
  rebase: sequencer({ refuseShort: 'ix', refuseLong: ['interactive'], strategyLetter: true }),
  reflog: NONE,
  remote: { check: remote },
  repack: NONE,
  replace: { refuseShort: 'e' },
  rerere: NONE,
  reset: PATCH,
  restore: PATCH,
  revert: sequencer(),
  'rev-list': NONE,
  'rev-parse': NONE,
  rm: NONE,
  shortlog: LOG_LIKE,
  show: LOG_LIKE,
  'show-branch': NONE,
  'show-ref': NONE,
  'sparse-checkout': NONE,
  stash: { check: stash },
  status: NONE,
  stripspace: NONE,
  switch: NONE,
  'symbolic-ref': NONE,
  tag: { refuseShort: 'suev', refuseLong: ['sign', 'local-user', 'verify'], check: tag },
  'unpack-objects': NONE,
  'update-index': NONE,
  'update-ref': NONE,
  var: NONE,
  'verify-pack': NONE,
  version: NONE,
  whatchanged: LOG_LIKE,
  worktree: { check: worktree },
  'write-tree': NONE,
};

/** Judges `git …` (argv without `git`). */
export function gitRule(words: CommandWords): ProgramJudgement {
  const args = words.argv.slice(1);
  let index = 0;
  while (index < args.length && args[index]!.startsWith('-')) {
    const arg = args[index]!;
    if (arg === '-C') {
      if (index + 1 >= args.length || words.globs[index + 2]) {
        return refuse('-C can change which repository git obeys: it needs one folder, without a glob');
      }
      index += 2;
    } else if (TOP_LEVEL_FLAGS.has(arg) || arg.startsWith('--namespace=')) index += 1;
    else {
      const name = arg.startsWith('--') ? arg.split('=')[0]! : arg.slice(0, 2);
      return refuse(`${name} can change configuration, hooks, the pager or which repository git obeys`);
    }
  }
  const name = args[index];
  if (name === undefined) return judgement();
  const sub = Object.hasOwn(GIT_SUBCOMMANDS, name) ? GIT_SUBCOMMANDS[name] : undefined;
  if (!sub) {
    return refuse(
      `${name} is not a git subcommand rune judges (it may run programs, or be an alias or an external git-${name})`,
    );
  }
  return judgeSubcommand(name, sub, args.slice(index + 1));
}

function judgeSubcommand(name: string, sub: Subcommand, rest: readonly string[]): ProgramJudgement {
  const options = optionWords(rest);
  const refusedLong = [...ALWAYS_REFUSED, ...(sub.refuseLong ?? [])];
  const writeLong = sub.writes?.long ?? [];
  const writes: string[] = [];
  const reads: string[] = [];
  for (const [position, word] of options) {
    if (word.startsWith('--')) {
      const eq = word.indexOf('=');
      const written = eq === -1 ? word.slice(2) : word.slice(2, eq);
      // git takes any unambiguous prefix of a long option: a prefix of a refused one counts as it.
      const matches = (full: string) => written.length > 0 && full.startsWith(written);
      // An exact name wins over a prefix: `merge --verify` runs hooks, it is no --verify-signatures.
      const hit =
        (sub.refuseLong ?? []).find((full) => full === written) ??
        (REAL_OPTIONS.has(written) ? undefined : refusedLong.find(matches));
      if (hit) return refuse(`${name} --${hit} ${refusedLongReason(hit)}`);
      const value = () => (eq === -1 ? (rest[position + 1] ?? '') : word.slice(eq + 1));
      if (writeLong.some(matches)) writes.push(value());
      else if ((sub.reads ?? []).some(matches)) reads.push(value());
      continue;
    }
    for (const [offset, letter] of [...word.slice(1)].entries()) {
      if (sub.refuseShort?.includes(letter))
        return refuse(`${name} -${letter} ${refusedShortReason(name, letter)}`);
      if (sub.writes?.short?.includes(letter)) {
        const glued = word.slice(offset + 2);
        writes.push(glued !== '' ? glued : (rest[position + 1] ?? ''));
        break;
      }
    }
  }
  const checked = sub.check?.(rest);
  if (checked?.refused) return refuse(`${name} ${checked.refused}`);
  return judgement({
    writes: [...writes, ...(checked?.writes ?? [])].filter(Boolean),
    reads: [...reads, ...(checked?.reads ?? [])].filter(Boolean),
    trees: checked?.trees ?? [],
  });
}

function refusedLongReason(option: string): string {
  if (option === 'help') return 'runs man or a browser';
  if (['edit', 'template', 'edit-description', 'edit-todo', 'reedit-message', 'continue'].includes(option))
    return 'opens an editor';
  if (option === 'patch' || option === 'interactive')
    return 'asks on standard input, where an answer can open an editor that runs commands';
  if (
    ['gpg-sign', 'show-signature', 'verify-signatures', 'signed', 'sign', 'local-user', 'verify'].includes(
      option,
    )
  )
    return 'runs gpg';
  if (option === 'config') return 'can install hooks or set programs that run';
  return 'runs a program of the caller’s choosing';
}

function refusedShortReason(name: string, letter: string): string {
  if (letter === 'S' || (name === 'tag' && 'suv'.includes(letter))) return 'runs gpg';
  if (letter === 'O') return 'runs a pager';
  if (letter === 'x') return 'runs commands';
  if (letter === 'p' || (letter === 'i' && ['add', 'stage', 'am', 'clean'].includes(name)))
    return 'asks on standard input, where an answer can open an editor that runs commands';
  if (letter === 'u' || (name === 'clone' && letter === 'c'))
    return 'runs a program or sets configuration that does';
  return 'opens an editor';
}
