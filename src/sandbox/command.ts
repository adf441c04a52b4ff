// `rune sandbox [--allow-read P] [--allow-write P] [--allow-domain D] -- CMD …`: runs any command in
// the same stack the agent's tools get (the configured lists plus the flags), streaming its stdio,
// and ends with the command's exit code.
import { constants } from 'node:os';
import { loadConfig } from '../config/load.ts';
import type { SandboxMode } from '../config/schema.ts';
import { RuneError } from '../core/errors.ts';
import { createLogger } from '../core/logger.ts';
import { domainPatternProblem } from '../policy/domains.ts';
import { createSandboxExecutor } from './executor.ts';
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
}

export function formatLayers(layers: readonly LayerReport[]): string {
  return layers
    .map((l) => `  ${l.layer.padEnd(11)}${l.applied ? 'applied' : 'SKIPPED'}  ${l.detail}`)
    .join('\n');
}

export async function runSandboxCommand(argv: string[], options: SandboxCommandOptions): Promise<number> {
  if (argv.length === 0)
    throw new RuneError('USAGE', 'rune sandbox: no command given (rune sandbox -- CMD ...)');
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
  const mode = (options.sandbox as SandboxMode | undefined) ?? config.sandbox.mode;
  const executor = createSandboxExecutor({ config, logger, mode });
  const policy = config.policy;
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  const proc = executor.spawn({
    argv,
    cwd: process.cwd(),
    env,
    readOnlyPaths: [...policy.allowed_paths_ro, ...policy.allowed_files_ro, ...(options.allowRead ?? [])],
    readWritePaths: [...policy.allowed_paths_rw, ...policy.allowed_files_rw, ...(options.allowWrite ?? [])],
    allowedDomains: [...policy.allowed_domains, ...(options.allowDomain ?? [])],
  });
  const stop = () => proc.kill();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  proc.stdout.pipe(process.stdout, { end: false });
  proc.stderr.pipe(process.stderr, { end: false });
  if (process.stdin.isTTY) proc.stdin.end();
  else process.stdin.pipe(proc.stdin);
  // A stdin that cannot be read (a socket that is not connected, say) ends the command's input
  // instead of ending rune with an unhandled error.
  process.stdin.on('error', (error: NodeJS.ErrnoException) => {
    process.stderr.write(
      `rune sandbox: standard input could not be read: ${error.code ?? error.message}; the command's input ends here\n`,
    );
    proc.stdin.end();
  });
  proc.stdin.on('error', () => {});
  const outDone = new Promise((done) => proc.stdout.on('end', done));
  const errDone = new Promise((done) => proc.stderr.on('end', done));
  const exit = await proc.exited;
  await Promise.all([outDone, errDone]);
  process.stdin.unpipe(proc.stdin);
  process.stdin.pause();
  process.off('SIGINT', stop);
  process.off('SIGTERM', stop);
  if (options.layers) process.stderr.write(`rune sandbox layers:\n${formatLayers(proc.layers)}\n`);
  if (exit.exitCode !== null) return exit.exitCode;
  const signal = exit.signal ? constants.signals[exit.signal as NodeJS.Signals] : undefined;
  return 128 + (signal ?? 0);
}
