// The documentation as tests: what README.md and docs/exit-codes.md claim, read into plain values
// (runnable examples, config snippets, the command and flag tables, the exit-code rows), and the
// checks that compare them with what the built binary says. Pure apart from the `run`/`help`
// functions callers pass in, so a fixture can show that a broken claim is caught.

/** One line of a ```sh doc-test block: run with `rune` on PATH; `# → exit N` and `# → "text"` are what it must do. */
export interface Example {
  command: string;
  exit: number;
  stdout?: string;
  /** 1-based line in the document, for messages. */
  line: number;
}

export interface FencedBlock {
  info: string;
  body: string;
  line: number;
}

export function fencedBlocks(markdown: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(.*)$/.exec(lines[i] ?? '');
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i] ?? ''); i++) body.push(lines[i] ?? '');
    blocks.push({ info: (open[1] ?? '').trim(), body: body.join('\n'), line: start + 1 });
  }
  return blocks;
}

/** Every line of every ```sh doc-test block. */
export function runnableExamples(markdown: string): Example[] {
  const examples: Example[] = [];
  for (const block of fencedBlocks(markdown)) {
    if (!/^(sh|bash|console)\s+doc-test\b/.test(block.info)) continue;
    block.body.split('\n').forEach((text, index) => {
      if (!text.trim() || text.trim().startsWith('#')) return;
      // The comment starts at the first " # " outside quotes; simple examples only, by design.
      const hash = text.search(/\s#\s/);
      const command = (hash === -1 ? text : text.slice(0, hash)).trim();
      const comment = hash === -1 ? '' : text.slice(hash);
      const exit = /→ exit (\d+)/.exec(comment);
      const stdout = /→ "([^"]*)"/.exec(comment);
      examples.push({
        command,
        exit: exit ? Number(exit[1]) : 0,
        ...(stdout ? { stdout: stdout[1] } : {}),
        line: block.line + 1 + index,
      });
    });
  }
  return examples;
}

/**
 * The ```yaml doc-test blocks: Concourse pipeline fragments (a whole pipeline, or a resource's
 * `source:` alone) whose rune resources and puts the docs test runs through the binary.
 */
export function pipelineSnippets(markdown: string): FencedBlock[] {
  return fencedBlocks(markdown).filter((block) => /^yaml\s+doc-test\b/.test(block.info));
}

/** The ```toml blocks: each one is meant to be a valid rune.toml on its own. */
export function configSnippets(markdown: string): FencedBlock[] {
  return fencedBlocks(markdown).filter((block) => /^toml\b/.test(block.info));
}

export interface CommandRow {
  /** The subcommand words (`['mcp', 'login']`); empty for the agent itself. */
  words: string[];
  /** Every flag the row's syntax names (`--yes`, `-v`). */
  flags: Set<string>;
  syntax: string;
}

const FLAG = /(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])(?![\w-])/g;

function flagsIn(text: string): Set<string> {
  return new Set([...text.matchAll(FLAG)].map((match) => match[1] ?? ''));
}

/** The rows of a table whose header's first cell is `header`, as cells (code spans unescaped). */
export function tableRows(markdown: string, header: string): string[][] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => new RegExp(`^\\|\\s*${header}\\s*\\|`).test(line));
  if (start === -1) return [];
  const rows: string[][] = [];
  for (let i = start + 2; i < lines.length && lines[i]?.startsWith('|'); i++) {
    const cells = (lines[i] ?? '')
      .replace(/\\\|/g, '\u0000')
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.replace(/\u0000/g, '|').trim());
    rows.push(cells);
  }
  return rows;
}

/** The README's "| command | what it does |" table, one entry per `rune …` code span. */
export function commandRows(markdown: string): CommandRow[] {
  const rows: CommandRow[] = [];
  for (const [cell = ''] of tableRows(markdown, 'command')) {
    for (const span of cell.matchAll(/`(rune[^`]*)`/g)) {
      const syntax = span[1] ?? '';
      const words: string[] = [];
      for (const word of syntax.split(/\s+/).slice(1)) {
        if (!/^[a-z][a-z-]*$/.test(word)) break;
        words.push(word);
      }
      rows.push({ words, flags: flagsIn(syntax), syntax });
    }
  }
  return rows;
}

/** Every flag of the README's "| flag | |" table (the agent's own). */
export function flagTable(markdown: string): Set<string> {
  const flags = new Set<string>();
  for (const [cell = ''] of tableRows(markdown, 'flag')) for (const flag of flagsIn(cell)) flags.add(flag);
  return flags;
}

/** The options a commander-style (or `rune notes`) --help lists: lines that start with a flag. */
export function helpFlags(help: string): Set<string> {
  const flags = new Set<string>();
  for (const line of help.split('\n')) {
    const head = /^\s{2}(-[a-zA-Z], )?(--[a-z][a-z0-9-]*)/.exec(line);
    if (!head) continue;
    if (head[1]) flags.add(head[1].slice(0, 2));
    flags.add(head[2] ?? '');
  }
  return flags;
}

/** The subcommand names of a commander --help ("Commands:" section), without `help`. */
export function helpCommands(help: string): string[] {
  const section = help.split(/^Commands:$/m)[1] ?? '';
  return [...section.matchAll(/^ {2}([a-z][a-z-]*)/gm)]
    .map((m) => m[1] ?? '')
    .filter((name) => name !== 'help');
}

const ALWAYS = new Set(['-h', '--help']);

/**
 * What the README's command and flag tables and the binary's --help disagree on: a flag --help shows
 * that the README does not name (undocumented), or one the README names that --help does not know.
 * `help(words)` is the output of `rune WORDS --help`.
 */
export async function helpProblems(
  markdown: string,
  help: (words: string[]) => Promise<string>,
): Promise<string[]> {
  const problems: string[] = [];
  const rows = commandRows(markdown);
  const agentFlags = flagTable(markdown);
  const main = await help([]);
  const documented = new Set(rows.map((row) => row.words.join(' ')));
  for (const name of helpCommands(main)) {
    if (![...documented].some((words) => words === name || words.startsWith(`${name} `)))
      problems.push(`rune --help lists the command "${name}", which the README's command table does not`);
  }
  // The agent: `rune --help` against the flag table (and the --version row).
  const versionRow = rows.find((row) => row.flags.has('--version'));
  const agentDocumented = new Set([...agentFlags, ...(versionRow ? ['--version', '-V'] : [])]);
  for (const flag of helpFlags(main)) {
    if (!ALWAYS.has(flag) && !agentDocumented.has(flag))
      problems.push(`rune --help shows ${flag}, which the README's flag table does not document`);
  }
  for (const flag of agentFlags) {
    if (!helpFlags(main).has(flag))
      problems.push(`the README's flag table names ${flag}, which rune --help does not know`);
  }
  for (const row of rows) {
    if (row.words.length === 0) continue;
    const shown = helpFlags(await help(row.words));
    const name = `rune ${row.words.join(' ')}`;
    for (const flag of shown) {
      if (!ALWAYS.has(flag) && !row.flags.has(flag))
        problems.push(`${name} --help shows ${flag}, which the README row \`${row.syntax}\` does not name`);
    }
    for (const flag of row.flags) {
      if (!ALWAYS.has(flag) && !shown.has(flag))
        problems.push(`the README row \`${row.syntax}\` names ${flag}, which ${name} --help does not know`);
    }
  }
  return problems;
}

export interface ExampleResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Each example whose exit code or output is not what its comment says. */
export async function exampleProblems(
  examples: readonly Example[],
  run: (command: string) => Promise<ExampleResult>,
): Promise<string[]> {
  const problems: string[] = [];
  for (const example of examples) {
    const result = await run(example.command);
    if (result.code !== example.exit) {
      problems.push(
        `README line ${example.line}: \`${example.command}\` exited ${result.code}, the README says ${example.exit}: ${result.stderr.trim().split('\n')[0] ?? ''}`,
      );
    } else if (example.stdout !== undefined && !result.stdout.includes(example.stdout)) {
      problems.push(
        `README line ${example.line}: \`${example.command}\` printed ${JSON.stringify(result.stdout.slice(0, 200))}, not "${example.stdout}"`,
      );
    }
  }
  return problems;
}

export interface ExitRow {
  code: number;
  name: string;
}

/** The rows of docs/exit-codes.md: `| 2 | \`USAGE\` | … |`. */
export function exitCodeRows(markdown: string): ExitRow[] {
  return tableRows(markdown, 'code').map(([code = '', name = '']) => ({
    code: Number(code),
    name: name.replace(/`/g, '') || '—',
  }));
}
