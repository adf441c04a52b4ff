// `rune sandbox [--allow-read P] [--allow-write P] [--allow-domain D] -- CMD …`: runs any command in
// the same stack the agent's tools get (the configured lists plus the flags), streaming its stdio,
// and ends with the command's exit code.
import { existsSync, fstatSync, realpathSync } from 'node:fs';
import { constants } from 'node:os';
import { loadConfig } from '../config/load.ts';
import type { SandboxMode } from '../config/schema.ts';
import { domainPatternProblem } from '../core/domains.ts';
import { RuneError } from '../core/errors.ts';
import { createLogger } from '../core/logger.ts';
import { absolutePath, homeDir, runeHome } from '../core/paths.ts';
import { floorPaths } from '../policy/paths.ts';
import { createSandboxExecutor } from './executor.ts';
import { floorGrantProblems, type Grant } from './floor-grants.ts';
import type { LayerReport } from './types.ts';

export interface SandboxCommandOptions {
  allowRead?: string[];
  allowWrite?: string[];
  allowDomain?: string[];
  sandbox?: string;
  layers?: boolean;
  config?: string;
  /** The program's -v/--verbose: NDJSON diagnostics on stderr (the helper's command line among them). */
  verbose?: boolean;
  /** The program's --unrestricted / --policy: the only way to grant a path inside the secrets floor. */
  unrestricted?: boolean;
  policy?: string;
}

function realOrSelf(path: string): string {
  // Asking first avoids a thrown error for each grant or floor path that does not exist.
  if (!existsSync(path)) return path;
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

/** Every grant of this run (the config's lists, then the flags) inside the secrets floor, as messages. */
function floorProblems(
  config: ReturnType<typeof loadConfig>['config'],
  options: SandboxCommandOptions,
  env: NodeJS.ProcessEnv,
): string[] {
  const home = homeDir(env);
  const cwd = process.cwd();
  const lexical = floorPaths(home, runeHome(env));
  const floor = [...new Set([...lexical, ...lexical.map(realOrSelf)])];
  const grants: Grant[] = [];
  const add = (source: string, paths: readonly string[] | undefined) => {
    for (const path of paths ?? []) {
      const absolute = absolutePath(path, cwd, home);
      grants.push({ source, path, forms: [absolute, realOrSelf(absolute)] });
    }
  };
  const policy = config.policy;
  add('policy.allowed_paths_ro', policy.allowed_paths_ro);
  add('policy.allowed_files_ro', policy.allowed_files_ro);
  add('policy.allowed_paths_rw', policy.allowed_paths_rw);
  add('policy.allowed_files_rw', policy.allowed_files_rw);
  add('--allow-read', options.allowRead);
  add('--allow-write', options.allowWrite);
  return floorGrantProblems(grants, floor);
}

/** Whether fd 0 is /dev/null (character device 1:3): there is nothing to pass on. */
function stdinIsDevNull(): boolean {
  try {
    const st = fstatSync(0);
    return st.isCharacterDevice() && st.rdev === 0x103;
  } catch {
    return true; // closed: nothing to read either
  }
}

/**
 * Passes rune's standard input on to the command, unless it is a terminal (the command gets none:
 * a sandboxed program never reads the person's keyboard) or /dev/null (then process.stdin, whose
 * stream costs a few ms to create, is never touched). Returns the stream being relayed.
 */
function relayStdin(target: NodeJS.WritableStream & { on(e: 'error', l: () => void): unknown }) {
  target.on('error', () => {});
  if (stdinIsDevNull() || process.stdin.isTTY) {
    target.end();
    return undefined;
  }
  process.stdin.pipe(target);
  // A stdin that cannot be read (a socket that is not connected, say) ends the command's input
  // instead of ending rune with an unhandled error.
  process.stdin.on('error', (error: NodeJS.ErrnoException) => {
    process.stderr.write(
      `rune sandbox: standard input could not be read: ${error.code ?? error.message}; the command's input ends here\n`,
    );
    target.end();
  });
  return process.stdin;
}

export function formatLayers(layers: readonly LayerReport[]): string {
  return layers
    .map((l) => `  ${l.layer.padEnd(11)}${l.applied ? 'applied' : 'SKIPPED'}  ${l.detail}`)
    .join('\n');
}

export async function runSandboxCommand(argv: string[], options: SandboxCommandOptions): Promise<number> {
  if (argv.length === 0)
    throw new RuneError('USAGE', 'sandbox: no command given; put it after --: rune sandbox -- CMD ...');
  if (options.sandbox !== undefined && !['auto', 'strict', 'off'].includes(options.sandbox))
    throw new RuneError(
      'USAGE',
      `--sandbox must be auto, strict or off, not ${JSON.stringify(options.sandbox)}`,
    );
  // The same check as allowed_domains in rune.toml: "*", a URL or "*.com" would match nothing or too much.
  for (const domain of options.allowDomain ?? []) {
    const problem = domainPatternProblem(domain);
    if (problem) throw new RuneError('USAGE', `--allow-domain: ${problem}`);
  }
  const { config } = loadConfig({
    env: process.env,
    ...(options.config ? { file: options.config } : {}),
  });
  const logger = createLogger({
    verbose: options.verbose ?? false,
    ...(options.verbose ? {} : { level: config.log_level }),
  });
  const unrestricted =
    options.unrestricted === true || (options.policy ?? config.policy.mode) === 'unrestricted';
  if (!unrestricted) {
    const problems = floorProblems(config, options, process.env);
    if (problems.length > 0) {
      throw new RuneError('USAGE', 'a grant of rune sandbox reaches into the secrets floor; nothing ran', {
        details: problems,
      });
    }
  }
  const mode = (options.sandbox as SandboxMode | undefined) ?? config.sandbox.mode;
  if (mode === 'off') {
    // Off means no layer at all; saying so keeps a person from trusting grants nothing enforces.
    const why = options.sandbox === 'off' ? '--sandbox off' : 'sandbox.mode = "off" in the configuration';
    process.stderr.write(
      `rune sandbox: the sandbox is off (${why}): the command runs with no layer and can read everything you can; use --sandbox auto to confine it\n`,
    );
  }
  const executor = createSandboxExecutor({ config, logger, mode });
  const policy = config.policy;
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  // Each grant as the floor check judged it: `~` is the home folder, never a folder named ~ here.
  const cwd = process.cwd();
  const absolute = (paths: readonly string[]) =>
    paths.map((path) => absolutePath(path, cwd, homeDir(process.env)));
  const proc = executor.spawn({
    argv,
    cwd,
    env,
    readOnlyPaths: absolute([
      ...policy.allowed_paths_ro,
      ...policy.allowed_files_ro,
      ...(options.allowRead ?? []),
    ]),
    readWritePaths: absolute([
      ...policy.allowed_paths_rw,
      ...policy.allowed_files_rw,
      ...(options.allowWrite ?? []),
    ]),
    allowedDomains: [...policy.allowed_domains, ...(options.allowDomain ?? [])],
  });
  const stop = () => proc.kill();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  proc.stdout.pipe(process.stdout, { end: false });
  proc.stderr.pipe(process.stderr, { end: false });
  const input = relayStdin(proc.stdin);
  const outDone = new Promise((done) => proc.stdout.on('end', done));
  const errDone = new Promise((done) => proc.stderr.on('end', done));
  const exit = await proc.exited;
  await Promise.all([outDone, errDone]);
  input?.unpipe(proc.stdin);
  input?.pause();
  process.off('SIGINT', stop);
  process.off('SIGTERM', stop);
  if (options.layers) process.stderr.write(`rune sandbox layers:\n${formatLayers(proc.layers)}\n`);
  if (exit.exitCode !== null) return exit.exitCode;
  const signal = exit.signal ? constants.signals[exit.signal as NodeJS.Signals] : undefined;
  return 128 + (signal ?? 0);
}
