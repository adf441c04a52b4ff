// Which `allowed_commands` entry covers a command. What each program does with its arguments is
// judged by its rules in programs/, loaded with the shell parser.

/** The allowlist entry covering argv (`ls`, or a prefix such as `git status`), if any. */
export function matchAllowed(argv: readonly string[], allowed: readonly string[]): string | undefined {
  return allowed.find((entry) => {
    const words = entry.trim().split(/\s+/);
    return words.length <= argv.length && words.every((word, index) => argv[index] === word);
  });
}
