// `rune notes`: the collaborative Markdown notes server (docs/adr/0006, 0011, 0013), and
// `rune notes hash-password`.
// Parses the flags, loads the config, builds the server, listens, and shuts down cleanly on SIGTERM.
import { mkdirSync, realpathSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { createDefaultExecutor, requireStrictLayers } from '../agent/deps.ts';
import { loadConfig } from '../config/load.ts';
import type { RuneConfig } from '../config/schema.ts';
import type { ModeContext } from '../core/bundles.ts';
import { RuneError } from '../core/errors.ts';
import { createLogger, type Logger } from '../core/logger.ts';
import { absolutePath, homeDir, runeHome } from '../core/paths.ts';
import { floorEntryFor, floorPaths } from '../policy/paths.ts';
import { lockDataFolder } from './data-lock.ts';
import { hashPassword } from './passwords.ts';
import { agentRunner } from './runner.ts';
import { build } from './server.ts';
import { openFailure } from './storage.ts';

/**
 * The folder the note chats' agents work in. It lies outside RUNE_HOME: the policy's secrets floor
 * covers all of RUNE_HOME (sessions, token hashes, notes.db), so a workspace there would leave the
 * agent with no usable folder for its standard tools. A configured folder inside the floor is an
 * error; the default moves next to RUNE_HOME when HOME itself lies inside it (service accounts).
 */
export function chatWorkspace(
  configured: string | undefined,
  env: NodeJS.ProcessEnv,
  logger: { warn(event: string, fields: { message: string }): void },
): string {
  const home = homeDir(env);
  const runeDir = resolve(runeHome(env));
  const floor = floorPaths(home, runeDir);
  const canonical = [...new Set([...floor, ...floor.map(realOrSelf)])];
  const inFloor = (dir: string) => floorEntryFor(dir, canonical) ?? floorEntryFor(realOrSelf(dir), canonical);
  const create = (dir: string) => mkdirSync(dir, { recursive: true, mode: 0o700 });

  if (configured) {
    const wanted = absolutePath(configured, process.cwd(), home);
    const refuse = (hit: string) =>
      new RuneError(
        'CONFIG_INVALID',
        `notes.workspace: ${wanted} lies inside ${hit}, which the policy's secrets floor protects; the chat agent could not use it. Set [notes] workspace to a folder outside it.`,
      );
    let hit = inFloor(wanted);
    if (hit) throw refuse(hit);
    try {
      create(wanted);
    } catch (error) {
      throw new RuneError(
        'CONFIG_INVALID',
        `notes.workspace: cannot create ${wanted}: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    hit = inFloor(wanted);
    if (hit) throw refuse(hit);
    return wanted;
  }
  const dataHome =
    env.XDG_DATA_HOME && isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : join(home, '.local', 'share');
  for (const candidate of [join(dataHome, 'rune', 'notes-workspace'), `${runeDir}-notes-workspace`]) {
    if (inFloor(candidate)) continue;
    try {
      create(candidate);
    } catch {
      continue;
    }
    if (!inFloor(candidate)) return candidate;
  }
  const fallback = join(runeDir, 'notes', 'workspace');
  try {
    create(fallback);
  } catch (error) {
    throw new RuneError(
      'IO',
      `cannot create a folder for the chat agent (tried ${dataHome}/rune/notes-workspace, ${runeDir}-notes-workspace and ${fallback}): ${(error as Error).message}; set [notes] workspace to a writable folder`,
      { cause: error },
    );
  }
  logger.warn('notes.workspace_in_floor', {
    message: `no folder outside RUNE_HOME could be made for the chat agent, so it works in ${fallback}, where the secrets floor lets it use only the notes tools; set [notes] workspace to fix this`,
  });
  return fallback;
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

const HELP = `Usage: rune notes [--bind ADDRESS] [--port PORT] [--config FILE] [--verbose]
       rune notes hash-password      read a password (stdin or prompt), print its scrypt hash

Serves the collaborative Markdown notes (data in $RUNE_HOME/notes). Settings: [notes] in rune.toml.

Options:
  --bind ADDRESS   the address to listen on (default 127.0.0.1, or [notes] bind)
  --port PORT      the port (default 9527, or [notes] port; 0 picks a free one)
  --config FILE    another configuration file (default $RUNE_HOME/rune.toml)
  -v, --verbose    diagnostics as NDJSON on stderr
  -h, --help       this help
`;

const HASH_HELP = `Usage: rune notes hash-password

Reads a password (typed at a prompt without echo, or from stdin when it is not a terminal) and
prints its scrypt hash, for [notes.local] in rune.toml: admins = ["alice:scrypt$…"].
`;

async function readPassword(): Promise<string> {
  if (!process.stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks)
      .toString('utf8')
      .replace(/\r?\n$/, '');
  }
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  // Typed characters are not echoed: the password must not stay on the screen.
  (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = () => {};
  process.stderr.write('Password: ');
  const answer = await new Promise<string>((resolve) => rl.question('', resolve));
  rl.close();
  process.stderr.write('\n');
  return answer;
}

async function hashPasswordCommand(args: readonly string[]): Promise<number> {
  if (args.length === 1 && (args[0] === '--help' || args[0] === '-h')) {
    process.stdout.write(HASH_HELP);
    return 0;
  }
  if (args.length > 0) {
    throw new RuneError(
      'USAGE',
      `hash-password: unexpected ${JSON.stringify(args[0])}: it takes no arguments (never a password on the command line, where \`ps\` shows it); type the password at its prompt or pipe it in`,
    );
  }
  const password = await readPassword();
  if (!password) {
    throw new RuneError(
      'USAGE',
      'hash-password: the password is empty; type one at the prompt, or pipe it in: printf %s "$PASSWORD" | rune notes hash-password',
    );
  }
  process.stdout.write(`${await hashPassword(password)}\n`);
  return 0;
}

export async function run(context: ModeContext): Promise<number> {
  if (context.args[0] === 'hash-password') return hashPasswordCommand(context.args.slice(1));
  let values: { bind?: string; port?: string; config?: string; help?: boolean; verbose?: boolean };
  try {
    ({ values } = parseArgs({
      args: context.args,
      options: {
        bind: { type: 'string' },
        port: { type: 'string' },
        config: { type: 'string' },
        verbose: { type: 'boolean', short: 'v' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (error) {
    throw new RuneError('USAGE', `rune notes: ${(error as Error).message}`, {
      details: [HELP.split('\n')[0]!],
    });
  }
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  let port: number | undefined;
  if (values.port !== undefined) {
    if (!/^\d+$/.test(values.port))
      throw new RuneError(
        'USAGE',
        `--port: expected a number, got ${values.port}; give a port from 0 (any free one) to 65535`,
      );
    port = Number(values.port);
  }
  const load = () =>
    loadConfig({
      flags: {
        notes: { ...(values.bind ? { bind: values.bind } : {}), ...(port !== undefined ? { port } : {}) },
      },
      flagLabels: { 'notes.bind': '--bind', 'notes.port': '--port' },
      ...(values.config ? { file: values.config } : {}),
    }).config;
  const config = load();
  const logger = createLogger({ level: values.verbose ? 'debug' : 'info', verbose: values.verbose ?? false });
  const dataDir = join(runeHome(), 'notes');
  // One server per data folder: a second start refuses here (exit 18), before it touches anything.
  const lock = lockDataFolder(dataDir);
  try {
    return await serve(config, load, dataDir, logger);
  } finally {
    lock.release();
  }
}

/** The server on a data folder this process holds, until SIGTERM or SIGINT. */
async function serve(
  config: RuneConfig,
  load: () => RuneConfig,
  dataDir: string,
  logger: Logger,
): Promise<number> {
  const workspace = chatWorkspace(config.notes.workspace, process.env, logger);
  // Strict mode: a server whose every chat would stop on a missing layer does not start (exit 8).
  requireStrictLayers(
    config,
    createDefaultExecutor({ prompt: '', config, logger, cwd: workspace, env: process.env }),
  );
  const server = await build({ config, dataDir, logger, runAgent: agentRunner(), cwd: workspace }).catch(
    (error: unknown) => {
      throw openFailure(join(dataDir, 'notes.db'), error);
    },
  );
  if (server.generatedAdmin) {
    // Shown once, never logged again: only its hash is stored.
    process.stderr.write(
      `rune notes: no accounts are configured, so an admin was created.\n  user: ${server.generatedAdmin.name}\n  password: ${server.generatedAdmin.password}\n  (shown only now; add [notes.local] accounts to rune.toml to manage logins yourself)\n`,
    );
  }
  try {
    await server.app.listen({ host: config.notes.bind, port: config.notes.port });
  } catch (error) {
    await server.close();
    throw new RuneError(
      'IO',
      `cannot listen on ${config.notes.bind}:${config.notes.port}: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  const address = server.app.server.address();
  const shown =
    typeof address === 'object' && address ? `${address.address}:${address.port}` : String(address);
  logger.info('notes.listening', { message: `rune notes listening on http://${shown} (data in ${dataDir})` });

  // SIGHUP reads the configuration again: accounts, role lists and login providers take effect at
  // once (sessions and tokens the new config no longer admits stop); the rest needs a restart.
  const onHup = () => {
    try {
      const ended = server.reload(load());
      logger.info('notes.reloaded', {
        message: `rune notes: configuration reloaded (accounts and login providers; ${ended} session(s) ended); other settings apply at the next start`,
      });
    } catch (error) {
      logger.error('notes.reload_failed', {
        message: `rune notes: the configuration was not reloaded, the old one stays: ${(error as Error).message}`,
      });
    }
  };
  process.on('SIGHUP', onHup);
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      logger.info('notes.stopping', { message: `rune notes: ${signal}, shutting down` });
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
      process.off('SIGHUP', onHup);
      resolve();
    };
    const onTerm = () => stop('SIGTERM');
    const onInt = () => stop('SIGINT');
    process.on('SIGTERM', onTerm);
    process.on('SIGINT', onInt);
  });
  await server.close();
  logger.info('notes.stopped', { message: 'rune notes: stopped' });
  return 0;
}
