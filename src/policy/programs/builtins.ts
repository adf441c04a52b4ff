// Shell builtins and programs that run other commands. `[`, `test`, `true`, `false` and `:` change
// nothing outside the shell and need no allowed_commands entry; builtins that set variables or
// run text as code, and wrappers that run the command they are given, are never auto-allowed.
import { type CommandWords, judgement, type ProgramJudgement, refuse } from './types.ts';

/** Programs and builtins that run another command or code given as arguments. */
export const INDIRECTION = new Set(
  `sh bash dash zsh ksh mksh yash fish csh tcsh busybox toybox env xargs nohup timeout nice ionice
   stdbuf setsid time watch exec eval source . command builtin trap alias sudo doas su runuser
   pkexec chroot unshare nsenter systemd-run strace ltrace gdb flock script parallel taskset chrt
   prlimit unbuffer expect firejail bwrap npx pnpx bunx fakeroot catchsegv valgrind perf run-parts
   start-stop-daemon setpriv capsh cgexec numactl torsocks proxychains sg newgrp ssh-agent
   dbus-run-session xvfb-run entr inotifywait fc`.split(/\s+/),
);

/** Builtins that change how the shell runs the commands after them (`hash -p`, `enable -f lib.so`). */
const CHANGES_SHELL = new Set(['hash', 'enable', 'shopt', 'set']);

/** Builtins that assign shell variables, where bash evaluates array subscripts as code (`a[$(id)]`). */
const SETS_VARIABLES = new Set(
  `read getopts mapfile readarray let declare typeset local export readonly unset wait`.split(/\s+/),
);

/** The operators `test` and `[` have in dash and bash, apart from `-v` and `-R` (variables, see above). */
const TEST_OPERATORS = new Set(
  `! ( ) = == != < > -a -o -b -c -d -e -f -g -h -k -L -N -O -G -p -r -s -S -t -u -w -x -z -n
   -eq -ne -lt -le -gt -ge -nt -ot -ef`.split(/\s+/),
);

function testRule(words: CommandWords): ProgramJudgement {
  const [program, ...args] = words.argv;
  if (program === '[') {
    if (args.at(-1) !== ']') return refuse('without its closing ]');
    args.pop();
  }
  const odd = args.find(
    (arg) => arg.startsWith('-') && arg.length > 1 && !TEST_OPERATORS.has(arg) && !/^-\d+$/.test(arg),
  );
  if (odd) return refuse(`${odd} is not a test operator rune judges (-v and -R read variables)`);
  return judgement({ builtin: true });
}

export const BUILTIN_RULES: Readonly<Record<string, (words: CommandWords) => ProgramJudgement>> = {
  '[': testRule,
  test: testRule,
  true: () => judgement({ builtin: true }),
  false: () => judgement({ builtin: true }),
  ':': () => judgement({ builtin: true }),
  // bash's printf -v assigns a variable (with the subscript evaluation above).
  printf: (words) =>
    words.argv.slice(1).some((arg) => arg === '-v' || /^-v./.test(arg))
      ? refuse('-v assigns a shell variable')
      : judgement(),
};

/** Why a program is never auto-allowed by its name alone, or undefined. */
export function indirection(program: string): string | undefined {
  if (INDIRECTION.has(program)) return `${program} runs another command`;
  if (CHANGES_SHELL.has(program)) return `${program} changes how the shell runs later commands`;
  if (SETS_VARIABLES.has(program)) return `${program} sets shell variables, which rune does not judge`;
  return undefined;
}
