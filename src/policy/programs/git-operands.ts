// What some git subcommands do with their operands and option values: the folder clone and init
// make, the files checkout-index, format-patch, merge-file, bundle and worktree write, the
// transport helpers a URL names, and whether commit, tag and notes open an editor.
import { getopt, named, parseOptions } from './options.ts';
import { judgement, type ProgramJudgement, refuse } from './types.ts';

/** The option words (with their positions) before `--`. */
export function optionWords(rest: readonly string[]): [number, string][] {
  const out: [number, string][] = [];
  for (const [position, word] of rest.entries()) {
    if (word === '--') break;
    if (word.startsWith('-') && word !== '-') out.push([position, word]);
  }
  return out;
}

/** The value of an option given as `-s V`, `-sV`, `--strategy=V` or `--strategy V` (any prefix). */
export function optionValue(
  args: readonly string[],
  letter: string | undefined,
  long: string,
): string | undefined {
  const parsed = parseOptions(args, getopt(letter ? `${letter}:` : '', `${long}=`));
  return named(parsed, ...(letter ? [letter] : []), long).at(-1)?.value;
}

/** A URL with a transport helper (`ext::sh -c …`, `fd::`, `X::url`) runs git-remote-X. */
export function urls(args: readonly string[]): ProgramJudgement | undefined {
  const helper = args.find((arg) => !arg.startsWith('-') && arg.includes('::'));
  return helper ? refuse(`${helper} names a transport helper, a program git runs`) : undefined;
}

/** `git diff --no-index A B` compares two paths outside any repository: folders are read whole. */
export function noIndex(args: readonly string[]): ProgramJudgement | undefined {
  const end = args.indexOf('--');
  const options = end === -1 ? args : args.slice(0, end);
  if (!options.includes('--no-index')) return undefined;
  const operands = [
    ...options.filter((arg) => !arg.startsWith('-') || arg === '-'),
    ...(end === -1 ? [] : args.slice(end + 1)),
  ];
  return judgement({ trees: operands });
}

/**
 * pull merges or rebases: a strategy other than git's own runs git-merge-NAME, `--rebase=interactive`
 * opens an editor, and a URL may name a transport helper.
 */
export function pull(args: readonly string[]): ProgramJudgement | undefined {
  const helper = urls(args);
  if (helper) return helper;
  const strategy = optionValue(args, 's', 'strategy');
  if (strategy !== undefined && !BUILTIN_STRATEGIES.has(strategy)) {
    return refuse(`with strategy "${strategy}" runs the program git-merge-${strategy}`);
  }
  // `--rebase=VALUE`, under any prefix of its name git accepts (`--reb=i`).
  const rebase = args.find((arg) => {
    const name = /^--([^=]+)=/.exec(arg)?.[1];
    return name !== undefined && name.length >= 3 && 'rebase'.startsWith(name);
  });
  const mode = rebase?.slice(rebase.indexOf('=') + 1) ?? '';
  if (mode !== '' && 'interactive'.startsWith(mode)) return refuse(`${rebase} opens an editor`);
  return undefined;
}

export const BUILTIN_STRATEGIES = new Set(['ort', 'recursive', 'resolve', 'octopus', 'ours', 'subtree']);

export function clone(args: readonly string[]): ProgramJudgement | undefined {
  const helper = urls(args);
  if (helper) return helper;
  const parsed = parseOptions(
    args,
    getopt(
      'b:c:j:o:u:lnqsv',
      'branch= origin= depth= reference= reference-if-able= separate-git-dir= shallow-since= shallow-exclude= filter= server-option= jobs= upload-pack= template= config= bundle-uri= ref-format=',
    ),
  );
  const [repository, directory] = parsed.operands;
  // Without a folder, clone makes one named after the repository in the working directory.
  const made = directory ?? (repository ? humanish(repository) : undefined);
  return judgement({
    writes: [...(made ? [made] : []), ...named(parsed, 'separate-git-dir').map((o) => o.value ?? '')],
    reads: named(parsed, 'reference', 'reference-if-able').map((o) => o.value ?? ''),
  });
}

function humanish(repository: string): string {
  const base = repository
    .replace(/\/+$/, '')
    .replace(/\/?\.git$/, '')
    .split(/[/:]/)
    .at(-1);
  return base && base !== '' ? base : '.';
}

export function init(args: readonly string[]): ProgramJudgement | undefined {
  const parsed = parseOptions(
    args,
    getopt(
      'bq',
      'bare shared=? initial-branch= object-format= ref-format= separate-git-dir= template= quiet',
    ),
  );
  return judgement({ writes: parsed.operands.length > 0 ? parsed.operands.slice(0, 1) : ['.'] });
}

export function commit(args: readonly string[]): ProgramJudgement | undefined {
  const fixup = optionValue(args, undefined, 'fixup');
  if (fixup !== undefined && /^(amend|reword):/.test(fixup))
    return refuse(`--fixup=${fixup} opens an editor`);
  const message = optionWords(args).some(
    ([, word]) =>
      (!word.startsWith('--') && /[mFC]/.test(word.slice(1))) ||
      ['--message', '--file', '--reuse-message', '--no-edit', '--fixup'].some(
        (long) => long.startsWith(word.split('=')[0]!) && word.length > 3,
      ),
  );
  return message ? undefined : refuse('without -m, -F, -C or --no-edit opens an editor');
}

export function tag(args: readonly string[]): ProgramJudgement | undefined {
  const words = optionWords(args).map(([, word]) => word);
  const annotated = words.some(
    (word) => (!word.startsWith('--') && word.includes('a')) || word.startsWith('--annotate'),
  );
  const message = words.some(
    (word) => (!word.startsWith('--') && /[mF]/.test(word.slice(1))) || /^--(message|file)/.test(word),
  );
  return annotated && !message ? refuse('-a without -m or -F opens an editor') : undefined;
}

export function checkoutIndex(args: readonly string[]): ProgramJudgement | undefined {
  // Files land at PREFIX + their path: judged as a file just under the prefix.
  const prefixes = args
    .filter((arg) => arg.startsWith('--prefix='))
    .map((arg) => arg.slice('--prefix='.length));
  return judgement({ writes: prefixes.map((prefix) => `${prefix}x`) });
}

export function formatPatch(args: readonly string[]): ProgramJudgement | undefined {
  const toFolder = optionWords(args).some(
    ([, word]) => word === '--stdout' || /^--o/.test(word) || (!word.startsWith('--') && word.includes('o')),
  );
  // Without -o the patches are written to the working directory.
  return toFolder ? undefined : judgement({ writes: ['.'] });
}

export function mergeFile(args: readonly string[]): ProgramJudgement | undefined {
  const parsed = parseOptions(
    args,
    getopt('L:pq', 'stdout diff3 zdiff3 ours theirs union marker-size= quiet object-id diff-algorithm='),
  );
  if (named(parsed, 'p', 'stdout').length > 0) return undefined;
  return judgement({ writes: parsed.operands.slice(0, 1) });
}

export function bundle(args: readonly string[]): ProgramJudgement | undefined {
  const [action, ...rest] = args;
  if (action !== 'create') return undefined;
  const parsed = parseOptions(rest, getopt('q', 'progress all-progress all-progress-implied version= quiet'));
  return judgement({ writes: parsed.operands.slice(0, 1) });
}

export function worktree(args: readonly string[]): ProgramJudgement | undefined {
  const [action, ...rest] = args;
  const parsed = parseOptions(
    rest,
    getopt(
      'fb:B:dqv',
      'force detach checkout no-checkout lock reason= orphan track no-track guess-remote no-guess-remote quiet relative-paths no-relative-paths expire= porcelain verbose z',
    ),
  );
  if (action === 'add') return judgement({ writes: parsed.operands.slice(0, 1) });
  if (action === 'move') return judgement({ writes: parsed.operands.slice(0, 2) });
  if (action === 'remove') return judgement({ writes: parsed.operands.slice(0, 1) });
  return undefined;
}

/** Read-only forms only: `--get`, `--get-all`, `--get-regexp`, `--list`, `get`, `list`. */
export function config(args: readonly string[]): ProgramJudgement | undefined {
  const reading = args.some((arg) => /^(--get(-all|-regexp)?|--list|-l|get|list)$/.test(arg));
  const writing = args.some((arg) =>
    /^(--(add|unset|unset-all|replace-all|rename-section|remove-section|edit)|-e|set|unset|rename-section|remove-section|edit)$/.test(
      arg,
    ),
  );
  return reading && !writing
    ? undefined
    : refuse('changes configuration (only --get, --list, get and list are judged)');
}

export function remote(args: readonly string[]): ProgramJudgement | undefined {
  const action = args.find((arg) => !arg.startsWith('-'));
  if (action === undefined || ['show', 'get-url', 'prune', 'update'].includes(action)) return urls(args);
  return refuse(`${action} changes the remote configuration`);
}

export function notes(args: readonly string[]): ProgramJudgement | undefined {
  const action = args.find((arg) => !arg.startsWith('-')) ?? 'list';
  if (['list', 'show', 'get-ref', 'prune', 'remove', 'copy'].includes(action)) return undefined;
  if (
    ['add', 'append'].includes(action) &&
    optionWords(args).some(([, word]) => /^-[mFCc]|^--(message|file|reuse-message)/.test(word))
  ) {
    return undefined;
  }
  return refuse(`${action} opens an editor (give -m or -F)`);
}
