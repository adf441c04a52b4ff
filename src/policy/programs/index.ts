// Which rule judges a program, by its name (a path such as /usr/bin/sed is judged as sed). A
// program without a rule gets only the generic checks of its words (the floor, denied paths).
import { ARCHIVE_RULES } from './archives.ts';
import { awk } from './awk.ts';
import { BUILD_RULES } from './build.ts';
import { BUILTIN_RULES, indirection } from './builtins.ts';
import { FILE_RULES } from './files.ts';
import { gitRule } from './git.ts';
import { NETWORK_RULES } from './network.ts';
import { SEARCH_RULES } from './search.ts';
import { sed } from './sed.ts';
import { type CommandWords, judgement, type ProgramJudgement, refuse } from './types.ts';

const RULES: Readonly<Record<string, (words: CommandWords) => ProgramJudgement>> = {
  ...BUILTIN_RULES,
  ...FILE_RULES,
  ...SEARCH_RULES,
  ...ARCHIVE_RULES,
  ...NETWORK_RULES,
  ...BUILD_RULES,
  git: gitRule,
  sed,
  awk,
  gawk: awk,
  mawk: awk,
  nawk: awk,
};

/** Programs rune has a rule for (the rest are judged by the generic rules only). */
export function hasRule(program: string): boolean {
  return Object.hasOwn(RULES, program.slice(program.lastIndexOf('/') + 1));
}

export function judgeProgram(words: CommandWords): ProgramJudgement {
  const program = words.argv[0] ?? '';
  const name = program.slice(program.lastIndexOf('/') + 1);
  const why = indirection(name);
  if (why) return refuse(why);
  const rule = Object.hasOwn(RULES, name) ? RULES[name] : undefined;
  if (!rule) return judgement();
  const judged = rule(words);
  return judged.refused ? { ...judged, refused: `${program} ${judged.refused}` } : judged;
}
