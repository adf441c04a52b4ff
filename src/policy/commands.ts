// Pure checks of one simple command: is it covered by `allowed_commands`, and does it use a
// program or flag known to run other code or write files (pinned here whatever the config says)?
import type { SimpleCommand } from './shell.ts';

/** Programs that run another command or code given as arguments: never auto-allowed. */
const INDIRECTION = new Set([
  'sh',
  'bash',
  'dash',
  'zsh',
  'ksh',
  'mksh',
  'fish',
  'csh',
  'tcsh',
  'busybox',
  'env',
  'xargs',
  'nohup',
  'timeout',
  'nice',
  'ionice',
  'stdbuf',
  'setsid',
  'time',
  'watch',
  'exec',
  'eval',
  'source',
  '.',
  'command',
  'builtin',
  'trap',
  'alias',
  'sudo',
  'doas',
  'su',
  'runuser',
  'pkexec',
  'chroot',
  'unshare',
  'nsenter',
  'systemd-run',
  'strace',
  'ltrace',
  'gdb',
  'flock',
  'script',
  'parallel',
  'taskset',
  'chrt',
  'prlimit',
  'unbuffer',
  'expect',
  'firejail',
  'bwrap',
]);

/** The allowlist entry covering argv (`ls`, or a prefix such as `git status`), if any. */
export function matchAllowed(argv: readonly string[], allowed: readonly string[]): string | undefined {
  return allowed.find((entry) => {
    const words = entry.trim().split(/\s+/);
    return words.length <= argv.length && words.every((word, index) => argv[index] === word);
  });
}

/** Why this command cannot be auto-allowed even when it is on the list, or undefined. */
export function dangerousUse(command: SimpleCommand): string | undefined {
  const [program = '', ...args] = command.argv;
  if (INDIRECTION.has(program)) return `${program} runs another command`;
  const check = FLAG_RULES[program];
  const problem = check?.(args);
  if (problem) return `${program} ${problem}`;
  // A glob can expand to a file named like a dangerous flag (`--pre=sh`), so globs are refused for
  // programs with pinned flags.
  if (check && command.globbed) return `${program} with an unquoted glob (a file name could become a flag)`;
  return undefined;
}

type FlagRule = (args: string[]) => string | undefined;

function hasFlag(args: string[], flags: readonly string[]): string | undefined {
  for (const arg of args) {
    if (arg === '--') return undefined;
    const name = arg.includes('=') ? arg.slice(0, arg.indexOf('=')) : arg;
    const hit = flags.find(
      (flag) =>
        name === flag ||
        (flag.length === 2 && !flag.startsWith('--') && arg.startsWith(flag)) ||
        // getopt_long and git's parse-options take any unambiguous prefix (`--compress-prog=sh`).
        (flag.startsWith('--') && name.startsWith('--') && name.length > 2 && flag.startsWith(name)),
    );
    if (hit) return hit;
  }
  return undefined;
}

/** A short option given alone, with its value glued on (`-xsh`) or at the end of a bundle (`-iO`). */
function hasShort(args: string[], letter: string): boolean {
  return args.some((arg) => !arg.startsWith('--') && new RegExp(`^-[A-Za-z]*${letter}`).test(arg));
}

const FLAG_RULES: Record<string, FlagRule> = {
  find: (args) => {
    const hit = args.find((arg) =>
      ['-exec', '-execdir', '-ok', '-okdir', '-delete', '-fprint', '-fprint0', '-fprintf', '-fls'].includes(
        arg,
      ),
    );
    return hit && `${hit} runs commands or writes files`;
  },
  rg: (args) => {
    // --hostname-bin (ripgrep 14) runs a program to name the host in hyperlinks.
    const hit = hasFlag(args, ['--pre', '--pre-glob', '--search-zip', '-z', '--hostname-bin']);
    return hit && `${hit} runs a preprocessor program`;
  },
  sed: sedRule,
  git: gitRule,
  tar: (args) => {
    const hit = hasFlag(args, [
      '--to-command',
      '--use-compress-program',
      '-I',
      '--checkpoint-action',
      '--info-script',
      '-F',
      '--new-volume-script',
    ]);
    if (hit) return `${hit} runs a program`;
    // Short options bundle (`-xIsh`, `-cT list`), and a first word without a dash is a bundle too (`tar xIf …`).
    const bundles = args.map((arg, index) => (index === 0 && !arg.startsWith('-') ? `-${arg}` : arg));
    const short = ['I', 'F', 'T'].find((letter) => hasShort(bundles, letter));
    if (short) return `-${short} runs a program or reads file names the policy cannot check`;
    const list = hasFlag(args, ['-T', '--files-from']);
    return list && `${list} reads file names the policy cannot check`;
  },
  sort: (args) => {
    const hit = hasFlag(args, ['-o', '--output', '--compress-program', '--files0-from']);
    return hit && `${hit} writes files, runs a program or reads a list of files`;
  },
  awk: awkRule,
  gawk: awkRule,
  mawk: awkRule,
  less: (args) => (hasFlag(args, ['--lesskey-src', '-k']) ? 'with a key file' : undefined),
  rsync: (args) => {
    const hit = hasFlag(args, ['-e', '--rsh', '--rsync-path']);
    return hit && `${hit} runs a program`;
  },
  ssh: (args) => {
    const hit = hasFlag(args, ['-o', '-F', '-J', '-w', '-L', '-R', '-D']);
    return hit && `${hit} can run commands or forward connections`;
  },
  man: (args) => {
    const hit = hasFlag(args, ['-P', '--pager', '-H', '--html', '-p', '--preprocessor', '-X', '--gxditview']);
    return hit && `${hit} runs a program`;
  },
  tee: () => 'writes files',
  dd: () => 'writes files',
};

function awkRule(args: string[]): string | undefined {
  // -f/-E program files, -i includes (gawk's inplace edits files), -l loads a shared library.
  if (
    args.some((arg) => /^-[fEil]/.test(arg)) ||
    hasFlag(args, ['--file', '--exec', '--include', '--load'])
  ) {
    return 'with a program file, an include or a library';
  }
  // Every word is checked: option values (`-v x=1`, `-F :`, `--source`) move the program along.
  if (args.some((arg) => /system|getline|\||>|print[^;]*>|fflush|close/.test(arg))) {
    return 'program runs commands or writes files';
  }
  return undefined;
}

const GIT_TOP_LEVEL = [
  '-c',
  '--config-env',
  '--exec-path',
  '-C',
  '--git-dir',
  '--work-tree',
  '-p',
  '--paginate',
];
const GIT_SUBCOMMANDS_REFUSED = new Set([
  'config',
  'daemon',
  'instaweb',
  'difftool',
  'mergetool',
  'filter-branch',
  'credential',
  'credential-store',
  'credential-cache',
  'web--browse',
  'submodule',
  'bisect',
  'upload-pack',
  'receive-pack',
  'shell',
  'archimport',
  'cvsserver',
]);

function gitRule(args: string[]): string | undefined {
  let index = 0;
  while (index < args.length && args[index]!.startsWith('-')) {
    const arg = args[index]!;
    const name = arg.includes('=') ? arg.slice(0, arg.indexOf('=')) : arg;
    if (GIT_TOP_LEVEL.includes(name) || (arg.startsWith('-c') && arg.length > 2)) {
      return `${name} can change configuration, hooks or the pager`;
    }
    index += 1;
  }
  const sub = args[index];
  if (sub === undefined) return undefined;
  if (GIT_SUBCOMMANDS_REFUSED.has(sub)) return `${sub} can run programs or change configuration`;
  const rest = args.slice(index + 1);
  const hit = hasFlag(rest, [
    '--upload-pack',
    '--receive-pack',
    '--exec',
    '--output',
    '--ext-diff',
    '--open-files-in-pager',
  ]);
  if (hit) return `${sub} ${hit} runs a program or writes files`;
  // The new repository's hooks come from --template or a hooksPath set with --config, and run at once.
  if (['clone', 'init'].includes(sub)) {
    const config = hasFlag(rest, ['--template', '--config', '--separate-git-dir']);
    if (config || (sub === 'clone' && hasShort(rest, 'c'))) {
      return `${sub} ${config ?? '-c'} can install hooks that run`;
    }
  }
  if (['clone', 'fetch', 'pull', 'ls-remote', 'archive', 'push'].includes(sub) && hasShort(rest, 'u')) {
    return `${sub} -u runs a program`;
  }
  if (sub === 'rebase' && (hasShort(rest, 'x') || hasFlag(rest, ['--exec'])))
    return 'rebase --exec runs commands';
  if (sub === 'format-patch' && (hasShort(rest, 'o') || hasFlag(rest, ['--output-directory'])))
    return 'format-patch -o writes files';
  if (sub === 'grep' && hasShort(rest, 'O')) return 'grep -O runs a pager';
  return undefined;
}

const SED_LONG = new Set([
  '--quiet',
  '--silent',
  '--regexp-extended',
  '--null-data',
  '--separate',
  '--unbuffered',
  '--posix',
  '--sandbox',
  '--debug',
]);

function sedRule(args: string[]): string | undefined {
  const scripts: string[] = [];
  let explicit = false;
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    if (arg === '-i' || arg.startsWith('-i') || arg.startsWith('--in-place'))
      return `${arg} edits files in place`;
    if (arg === '-f' || arg.startsWith('--file')) return 'with a script file';
    if (arg === '-e' || arg === '--expression') {
      scripts.push(args[index + 1] ?? '');
      explicit = true;
      index += 1;
    } else if (arg.startsWith('--expression=')) {
      scripts.push(arg.slice('--expression='.length));
      explicit = true;
    } else if (arg.startsWith('-e') && arg.length > 2) {
      scripts.push(arg.slice(2));
      explicit = true;
    } else if (arg.startsWith('--')) {
      if (!SED_LONG.has(arg)) return `${arg} is not a known harmless option`;
    } else if (arg.startsWith('-') && arg !== '-') {
      if (!/^-[nErsuz]+$/.test(arg)) return `${arg} is not a known harmless option`;
    } else if (!explicit) {
      scripts.push(arg);
      explicit = true;
    }
  }
  for (const script of scripts) {
    const problem = sedScriptProblem(script);
    if (problem) return problem;
  }
  return undefined;
}

/**
 * Accepts only sed scripts made of harmless commands: s (flags g, p, i, I, m, M, digits), y, p, d,
 * q, =, n, N, P, D, h, H, g, G, x, l, with line or /regex/ addresses. `e`, `w`, `W`, `r`, `R`, the
 * `s///e` and `s///w` flags, and anything unrecognised are refused.
 */
export function sedScriptProblem(script: string): string | undefined {
  let at = 0;
  const text = script;
  const skipSpace = () => {
    while (at < text.length && /[\s;]/.test(text[at]!)) at++;
  };
  const readDelimited = (delimiter: string): boolean => {
    while (at < text.length) {
      const ch = text[at]!;
      if (ch === '\\') {
        at += 2;
        continue;
      }
      at++;
      if (ch === delimiter) return true;
    }
    return false;
  };
  const readAddress = (): boolean => {
    if (/\d/.test(text[at] ?? '')) {
      while (/[\d~]/.test(text[at] ?? '')) at++;
      return true;
    }
    if (text[at] === '$') {
      at++;
      return true;
    }
    if (text[at] === '/' || text[at] === '\\') {
      const delimiter = text[at] === '\\' ? text[at + 1] : '/';
      at += text[at] === '\\' ? 2 : 1;
      if (!delimiter || !readDelimited(delimiter)) return false;
      while (/[IM]/.test(text[at] ?? '')) at++;
      return true;
    }
    return true;
  };
  skipSpace();
  while (at < text.length) {
    if (!readAddress()) return 'sed script has an unterminated address';
    if (text[at] === ',') {
      at++;
      if (!readAddress()) return 'sed script has an unterminated address';
    }
    while (text[at] === ' ' || text[at] === '!') at++;
    const command = text[at];
    at++;
    if (command === 's' || command === 'y') {
      const delimiter = text[at];
      if (!delimiter || delimiter === '\\' || delimiter === '\n')
        return `sed ${command} command is malformed`;
      at++;
      if (!readDelimited(delimiter) || !readDelimited(delimiter))
        return `sed ${command} command is unterminated`;
      if (command === 's') {
        while (at < text.length && /[gpiImM0-9]/.test(text[at]!)) at++;
        const next = text[at];
        if (next !== undefined && !/[\s;}]/.test(next)) {
          return `s flag "${next}" (e runs commands, w writes files) is not allowed`;
        }
      }
    } else if (command !== undefined && 'pdqQ=nNPDhHgGxl'.includes(command)) {
      if ((command === 'q' || command === 'Q') && /\d/.test(text[at] ?? ''))
        while (/\d/.test(text[at] ?? '')) at++;
    } else {
      return `command "${command ?? ''}" is not allowed (only s, y, p, d, q, =, n, N, P, D, h, H, g, G, x, l)`;
    }
    skipSpace();
  }
  return undefined;
}
