// The agent CLI program (docs/adr/0007-agent-run-loop.md): commander parses flags and subcommands
// here, after main.ts has ruled out the Concourse, sandbox and notes programs.
import { resolve } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import type { ModeContext } from '../core/bundles.ts';
import { RuneError } from '../core/errors.ts';
import { writeStd } from '../core/stdio.ts';
import { VERSION } from '../core/version.ts';
import type { SandboxCommandOptions } from '../sandbox/command.ts';
import { agentAction } from './agent-action.ts';
import { type AgentFlags, addAgentOptions } from './flags.ts';
import type { InitOptions } from './init.ts';
import type { MountFlags } from './mount.ts';

export function buildProgram(setExit: (code: number) => void): Command {
  const program = new Command('rune')
    .description('A zero-trust AI agent: every tool call passes a policy and runs in a kernel sandbox.')
    .version(`rune ${VERSION}`, '-V, --version')
    .showHelpAfterError('(run rune --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => writeStd(1, text),
      writeErr: (text) => writeStd(2, text),
    });

  program
    .command('doctor')
    .description(
      'Show the version, embedded SQLite, the sandbox layers this machine offers, and the config in use',
    )
    .addOption(new Option('--json', 'print one JSON object'))
    .action(async (_options: { json?: boolean }, cmd: Command) => {
      // The agent's own --json is a program option; commander hands it to the program, so read both.
      const options = cmd.optsWithGlobals<{ json?: boolean; config?: string }>();
      // Loaded here: it brings better-sqlite3, which no agent run needs.
      const { collectDoctorReport, formatDoctorReport } = await import('./doctor.ts');
      const report = collectDoctorReport(process.env, options.config && resolve(options.config));
      process.stdout.write(
        options.json ? `${JSON.stringify(report, null, 2)}\n` : formatDoctorReport(report),
      );
      if (!report.config.valid) setExit(new RuneError('CONFIG_INVALID', '').exitCode);
    });

  program
    .command('sessions')
    .description('List stored sessions, most recent first (continue one with --resume ID)')
    .addOption(new Option('--json', 'print a JSON array'))
    .action(async (_options: { json?: boolean }, cmd: Command) => {
      const { sessionsCommand } = await import('./sessions.ts');
      setExit(sessionsCommand(cmd.optsWithGlobals<{ json?: boolean }>()));
    });

  addCheckpointCommands(program, setExit);

  program
    .command('audit')
    .description('Show the policy decisions of the audit log ($RUNE_HOME/audit.jsonl)')
    .option('--since <when>', 'only decisions after a duration ago (30m, 2h, 7d, 1w) or a date')
    .addOption(new Option('--decision <kind>', 'only this decision').choices(['allow', 'deny']))
    .addOption(new Option('--json', 'print a JSON array'))
    .action(async (_options: unknown, cmd: Command) => {
      // The agent's own --json sits on the main program; optsWithGlobals sees it either way.
      const options = cmd.optsWithGlobals<{ since?: string; decision?: string; json?: boolean }>();
      const { auditCommand } = await import('../policy/audit-command.ts');
      setExit(auditCommand(options, process.env, (text) => process.stdout.write(text)));
    });

  // No [] default: commander would print "(default: [])"; command.ts reads a missing list as empty.
  const collect = (value: string, previous: string[] = []) => [...previous, value];
  program
    .command('sandbox')
    .description("Run a command inside the sandbox layers the agent's tools get: rune sandbox -- CMD ...")
    .argument('<command...>', 'the program and its arguments (after --)')
    .option('--allow-read <path>', 'a folder or file the command may read (repeatable)', collect)
    .option('--allow-write <path>', 'a folder or file the command may read and write (repeatable)', collect)
    .option(
      '--allow-domain <name>',
      'a host name or IP the command may connect to, NAME:PORT for one port only (repeatable)',
      collect,
    )
    .option('--layers', 'print the layers applied and skipped to stderr')
    .option('--unrestricted', 'allow grants inside the secrets floor (~/.ssh, ~/.aws, …), refused otherwise')
    .action(async (command: string[], _options: SandboxCommandOptions, cmd: Command) => {
      // --sandbox and --config belong to the main program; they apply here too.
      const { runSandboxCommand } = await import('../sandbox/command.ts');
      setExit(await runSandboxCommand(command, cmd.optsWithGlobals<SandboxCommandOptions>()));
    });

  const mcp = program
    .command('mcp')
    .description('Log in to remote MCP servers (OAuth) and out again: rune mcp login NAME|URL');
  mcp
    .command('login')
    .description(
      'Log in to a remote MCP server (an [[mcp]] table name, or its URL) through your browser; the tokens are kept in $RUNE_HOME/mcp-auth (readable only by you)',
    )
    .argument('<server>', 'the name of an [[mcp]] table with a url, or the URL itself')
    .action(async (server: string, _options: unknown, cmd: Command) => {
      const { mcpLogin } = await import('./mcp.ts');
      setExit(await mcpLogin(server, cmd.optsWithGlobals<AgentFlags>()));
    });
  mcp
    .command('logout')
    .description(
      'Revoke (where the server offers it) and delete the stored login of a remote MCP server (an [[mcp]] table name, or its URL)',
    )
    .argument('<server>', 'the name of an [[mcp]] table with a url, or the URL itself')
    .action(async (server: string, _options: unknown, cmd: Command) => {
      const { mcpLogout } = await import('./mcp.ts');
      setExit(await mcpLogout(server, cmd.optsWithGlobals<AgentFlags>()));
    });

  program
    .command('mount')
    .description(
      "Serve rune's tools as files in DIR (FUSE): write a tool's arguments, read its result; every call passes the policy and the sandbox",
    )
    .argument('<dir>', 'an existing folder to mount on (or, with --unmount, the mount to end)')
    .option('--foreground', 'serve in this process until Ctrl-C or SIGTERM (default: in the background)')
    .option('--unmount', 'end the rune mount at DIR (also the mount of a rune that died)')
    .action(async (dir: string, _options: unknown, cmd: Command) => {
      // --policy, --sandbox, --mcp-stdio, --config … are the main program's flags; they apply here too.
      const { mountCommand } = await import('./mount.ts');
      setExit(await mountCommand(dir, cmd.optsWithGlobals<MountFlags>()));
    });

  // `rune notes …` is its own program, chosen in dispatch.ts before commander runs: this entry lists it
  // in `rune --help`, and is reached only when a flag comes first (`rune -v notes`).
  program
    .command('notes')
    .description('Serve the collaborative Markdown notes app, with an AI chat per note (rune notes --help)')
    .argument('[args...]', 'its own flags: rune notes --help')
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      throw new RuneError(
        'USAGE',
        "notes: flags before `notes` are the agent's; put notes first: rune notes [--bind A] [--port N] [--config F]",
      );
    });

  const repeat = (value: string, previous: string[] = []) => [...previous, value];
  program
    .command('init')
    .description(
      'Write a commented $RUNE_HOME/rune.toml: interactive on a terminal; with --yes (or no terminal) it takes --provider, --model, --base-url, --api-key and --policy',
    )
    // The agent's own flags that init writes into the file, declared here too so `rune init --help`
    // lists them; optsWithGlobals still takes them when given before `init`.
    .option('-y, --yes', 'ask nothing: write the file from the flags and the defaults')
    .option('--force', 'replace an existing rune.toml')
    .option('--provider <name>', 'openai, openrouter, copilot, gemini or anthropic (default: from the key)')
    .option('-m, --model <name>', 'the model')
    .option('--base-url <url>', 'endpoint of the provider')
    .option('--api-key <key>', 'the API key to store (prefer RUNE_API_KEY at run time: flags show in `ps`)')
    .option('--policy <mode>', 'allowlist (default) or confirm')
    .option('--allow-command <cmd>', 'a command allowed without asking (repeatable)', repeat)
    .option(
      '--allow-domain <host>',
      'a domain (HOST or HOST:PORT) fetch_url and tools may reach (repeatable)',
      repeat,
    )
    .action(async (_options: InitOptions, cmd: Command) => {
      // --model, --provider, … are the main program's flags; they apply here too.
      const { initCommand } = await import('./init.ts');
      setExit(await initCommand(cmd.optsWithGlobals<InitOptions>()));
    });

  addAgentOptions(program)
    .argument('[prompt...]', 'the task; stdin is joined to it when it is not a terminal')
    .action(async (prompt: string[], options: AgentFlags) => {
      setExit(await agentAction(prompt, options));
    });

  return program;
}

/** `rune diff` and `rune undo` (src/cli/checkpoints.ts). */
function addCheckpointCommands(program: Command, setExit: (code: number) => void): void {
  program
    .command('diff')
    .description(
      "Show what a session's runs changed, file by file (the last session with checkpoints by default)",
    )
    .argument('[session]', 'a session id or its prefix, or last')
    .option('--turn <n>', 'only what turn N changed')
    .option('--stat', 'list the turns and the files changed instead of the diffs')
    .action(async (session: string | undefined, _options: unknown, cmd: Command) => {
      const { diffCommand } = await import('./checkpoints.ts');
      setExit(diffCommand(session, cmd.optsWithGlobals<{ turn?: string; stat?: boolean }>()));
    });

  program
    .command('undo')
    .description(
      "Undo a session's last turn (or back to before turn N): its file changes and the stored conversation",
    )
    .argument('<session>', 'a session id or its prefix (rune --checkpoint prints it), or last')
    .option('--turn <n>', 'go back to before turn N (it and every later turn are undone)')
    .addOption(
      new Option(
        '--on-conflict <choice>',
        'a file someone else changed since: keep yours, take the checkpoint, or both (the copy beside yours); asked on a terminal',
      ).choices(['keep', 'take', 'both']),
    )
    .action(async (session: string, _options: unknown, cmd: Command) => {
      const { undoCommand } = await import('./checkpoints.ts');
      setExit(
        await undoCommand(
          session,
          cmd.optsWithGlobals<{ turn?: string; onConflict?: string; config?: string }>(),
        ),
      );
    });
}

/**
 * `rune help` and `rune help doctor` mean --help, as in git and npm. Only those exact forms: a prompt
 * that starts with the word ("help me fix the build") stays a prompt.
 */
export function helpAlias(args: readonly string[], commands: ReadonlySet<string>): string[] {
  const [first, second, ...rest] = args;
  if (first !== 'help' || rest.length > 0) return [...args];
  if (second === undefined) return ['--help'];
  return commands.has(second) ? [second, '--help'] : [...args];
}

export async function run(context: ModeContext): Promise<number> {
  let exitCode = 0;
  const program = buildProgram((code) => {
    exitCode = code;
  });
  try {
    const commands = new Set(program.commands.map((command) => command.name()));
    await program.parseAsync(helpAlias(context.args, commands), { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end through here with exit code 0; parse errors were already printed.
      return error.exitCode === 0 ? 0 : new RuneError('USAGE', '').exitCode;
    }
    throw error;
  }
  return exitCode;
}
