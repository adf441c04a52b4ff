// What rune's rules say one program does with its arguments. Pure data: the rules read only argv,
// the decision resolves the words against the folders the command runs in.

export interface ProgramJudgement {
  /** Why this use is never auto-allowed: it runs code rune did not judge, or changes configuration. */
  refused?: string;
  /** Words naming files or folders the program writes (or creates, removes, renames), as given. */
  writes: string[];
  /** Words naming files it reads that the generic rules would not see (values glued to an option). */
  reads: string[];
  /** Folders it reads whole trees of (a recursive grep, rg, tar); "." is where it runs. */
  trees: string[];
  /** A builtin that changes nothing outside the shell (`[`, `test`, `true`, `false`, `:`): no list entry needed. */
  builtin?: boolean;
}

/** A command as the rules see it: the words after quote removal, and which of them the shell globs. */
export interface CommandWords {
  argv: readonly string[];
  globs: readonly boolean[];
}

export function judgement(partial: Partial<ProgramJudgement> = {}): ProgramJudgement {
  return { writes: [], reads: [], trees: [], ...partial };
}

export function refuse(reason: string): ProgramJudgement {
  return judgement({ refused: reason });
}
