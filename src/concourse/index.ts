// The Concourse resource type (docs/adr/0004-concourse-resource.md): check/in/out chosen by the
// invoked name. stdout carries exactly one JSON value; everything else goes to stderr, the build log.
import type { ModeContext } from '../core/bundles.ts';
import { RuneError } from '../core/errors.ts';
import { createLogger } from '../core/logger.ts';
import { redact } from '../core/redact.ts';
import type { RunAgentFn } from './agent.ts';
import { isStep, runStep } from './protocol.ts';
import { claimStdout } from './stdout.ts';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function wantsDebug(stdin: string): boolean {
  try {
    return (JSON.parse(stdin) as { source?: { debug?: unknown } } | null)?.source?.debug === true;
  } catch {
    return false;
  }
}

export async function run(context: ModeContext): Promise<number> {
  // First, before anything can create process.stdout: from here on fd 1 is the build log.
  const stdout = await claimStdout();
  const step = context.invokedAs;
  if (!isStep(step)) throw new RuneError('INTERNAL', `not a Concourse step: ${step}`);
  const stdin = await readStdin();
  const log = (line: string): void => {
    process.stderr.write(`${redact(line)}\n`);
  };
  const debug = wantsDebug(stdin);
  // Concourse stops an aborted step with SIGTERM: end the run so tool process trees are killed.
  const stop = new AbortController();
  process.once('SIGTERM', () => stop.abort());
  const runAgent: RunAgentFn = async (options) => (await import('../agent/run.ts')).runAgent(options);
  const value = await runStep(step, context.args, stdin, {
    runAgent,
    env: process.env,
    logger: createLogger({ verbose: debug, level: debug ? 'debug' : 'info' }),
    log,
    now: () => new Date(),
    signal: stop.signal,
  });
  await stdout.emit(value);
  return 0;
}
