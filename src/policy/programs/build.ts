// Build and test runners: make, npm and pytest run the project's own recipes, scripts and tests,
// which is what listing them allows. What they must not do is run code given on the command line
// (`make --eval`, `make -f -`, a `CC=` or `SHELL=` assignment; npm's `--script-shell` and every
// other setting that names a program; `pytest -p` plugins) or write outside the writable folders
// (pytest's --junitxml, --basetemp; npm --pack-destination).
import { parseArgs, type Rule } from './files.ts';
import { getopt, named } from './options.ts';
import { type CommandWords, judgement, type ProgramJudgement, refuse } from './types.ts';

const MAKE = getopt(
  'bBC:d::eE:f:hiI:j::kl::L:nNo:O::pqrRsStvwW:',
  `always-make directory= debug=? environment-overrides eval= file= makefile= help ignore-errors
   include-dir= jobs=? jobserver-auth= jobserver-style= keep-going load-average=? max-load=?
   check-symlink-times just-print dry-run recon assume-old= old-file= output-sync=? print-data-base
   question no-builtin-rules no-builtin-variables shuffle=? silent quiet no-silent stop touch trace
   version print-directory no-print-directory what-if= new-file= assume-new= warn-undefined-variables
   no-keep-going`,
);

/** A make variable assignment operand: NAME=, NAME:=, NAME::=, NAME:::=, NAME+=, NAME?=, NAME!=. */
const MAKE_ASSIGNMENT = /^[^\s=:#]+\s*(:{0,3}|[+?!])=/;
const STDIN_FILES = new Set(['-', '/dev/stdin', '/dev/fd/0', '/proc/self/fd/0']);

function make(words: CommandWords): ProgramJudgement {
  const parsed = parseArgs(words, MAKE);
  if (parsed.ambiguous.length > 0) return refuse(`${parsed.ambiguous[0]} is an ambiguous option`);
  const evaluated = named(parsed, 'E', 'eval')[0];
  if (evaluated) return refuse(`${evaluated.word} evaluates make code given on the command line`);
  const stdin = named(parsed, 'f', 'file', 'makefile').find((option) => STDIN_FILES.has(option.value ?? ''));
  if (stdin) return refuse(`${stdin.word} ${stdin.value} reads the makefile from standard input`);
  const assignment = parsed.operands.find((operand) => MAKE_ASSIGNMENT.test(operand));
  if (assignment) {
    return refuse(
      `the assignment ${assignment.split('=')[0]}= can change the commands recipes run (CC=, SHELL=)`,
    );
  }
  const touched = named(parsed, 't', 'touch').length > 0 ? parsed.operands : [];
  return judgement({ writes: touched });
}

const NPM_SUBCOMMANDS = new Set(
  `test t tst run run-script rum urn start stop restart ls list la ll view info show v outdated explain
   why audit ci clean-install ic install-clean isntall-clean install i add in ins inst insta instal isnt
   isnta isntal isntall uninstall remove rm r un unlink update up upgrade udpate prune dedupe ddp pack
   query fund root prefix sbom pkg version rebuild rb get search ping whoami`.split(/\s+/),
);

/** npm settings that change nothing rune judges; `=` marks one that takes a value. */
const NPM_FLAGS = new Map(
  `silent s quiet q loglevel= verbose d dd ddd json long l parseable p all a depth= workspace= w=
   workspaces ws include-workspace-root if-present ignore-scripts omit= include= production save S
   save-dev D save-exact E save-optional O save-peer save-prod P no-save dry-run prefer-offline
   prefer-online offline audit no-audit fund no-fund legacy-peer-deps strict-peer-deps no-package-lock
   package-lock-only foreground-scripts progress no-progress color= no-color yes y no install-links
   global-style no-optional force f tag= access= otp= before= audit-level= os= cpu= libc= prefix= C=
   pack-destination= ci`
    .split(/\s+/)
    .map((entry) => [entry.replace(/=$/, ''), entry.endsWith('=')] as const),
);

function npm(words: CommandWords): ProgramJudgement {
  const args = words.argv.slice(1);
  const writes: string[] = [];
  const reads: string[] = [];
  let subcommand: string | undefined;
  for (let index = 0; index < args.length; index++) {
    const word = args[index]!;
    if (word === '--') break;
    if (!word.startsWith('-') || word === '-') {
      subcommand ??= word;
      continue;
    }
    const eq = word.indexOf('=');
    const name = (eq === -1 ? word : word.slice(0, eq)).replace(/^--?/, '');
    const takesValue = NPM_FLAGS.get(name);
    if (takesValue === undefined) {
      return refuse(
        `${word.split('=')[0]} is not an npm setting rune judges (npm settings can name programs: --script-shell, --node-options, …)`,
      );
    }
    if (!takesValue) continue;
    const value = eq === -1 ? (args[++index] ?? '') : word.slice(eq + 1);
    if (name === 'pack-destination') writes.push(value);
    else if (name === 'prefix' || name === 'C') reads.push(value);
  }
  if (subcommand !== undefined && !NPM_SUBCOMMANDS.has(subcommand)) {
    return refuse(
      `${subcommand} is not an npm subcommand rune judges (exec, explore, edit, help, config and init run programs or change settings)`,
    );
  }
  return judgement({ writes, reads });
}

const PYTEST = getopt(
  'k:m:p:c:o:r:W:n:xsvqlhVC',
  `junitxml= junit-xml= resultlog= result-log= log-file= basetemp= report-log= debug=? html=
   override-ini= config-file= inifile= pdbcls= rootdir= confcutdir= maxfail= tb= durations=
   import-mode= deselect= ignore= ignore-glob= capture= log-level= log-cli-level= cov= cov-report=
   junit-prefix= co collect-only lf last-failed ff failed-first sw stepwise pdb trace exitfirst
   verbose quiet help version`,
);

function pytest(words: CommandWords): ProgramJudgement {
  const parsed = parseArgs(words, PYTEST);
  const plugin = named(parsed, 'p').find((option) => !(option.value ?? '').startsWith('no:'));
  if (plugin) return refuse(`-p ${plugin.value ?? ''} imports a plugin module (only -p no:NAME is judged)`);
  const hit = named(parsed, 'c', 'config-file', 'inifile', 'o', 'override-ini', 'pdbcls')[0];
  if (hit) return refuse(`${hit.word} reads settings or imports code rune cannot check`);
  const writes = named(
    parsed,
    'junitxml',
    'junit-xml',
    'resultlog',
    'result-log',
    'log-file',
    'basetemp',
    'report-log',
    'html',
    'debug',
  ).map((option) => option.value ?? (option.name === 'debug' ? 'pytestdebug.log' : ''));
  // pytest-cov: `--cov-report=TYPE:PATH` writes the report there.
  for (const option of named(parsed, 'cov-report')) {
    const colon = (option.value ?? '').indexOf(':');
    if (colon !== -1) writes.push((option.value ?? '').slice(colon + 1));
  }
  return judgement({ writes: writes.filter(Boolean) });
}

export const BUILD_RULES: Readonly<Record<string, Rule>> = {
  make,
  gmake: make,
  npm,
  pytest,
  'py.test': pytest,
};
