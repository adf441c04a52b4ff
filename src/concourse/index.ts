// The Concourse resource type (docs/adr/0004-concourse-resource.md): check/in/out chosen by the
// invoked name. stdout carries exactly one JSON value; everything else goes to stderr, the build log.
import type { ModeContext } from '../core/bundles.ts';
import { RuneError } from '../core/errors.ts';
import { createLogger } from '../core/logger.ts';
import { redact } from '../core/redact.ts';
import type { RunAgentFn } from './agent.ts';
import { isStep, runStep } from './protocol.ts';
import { claimStdout } from './stdout.ts';
import { becomeStepOwner } from './step-user.ts';

/** Concourse's request is a few KiB; a prompt past this belongs in params.prompt_file. Without a
 * cap, a runaway input grows the heap until the container's memory limit kills the step silently. */
export const MAX_STDIN_BYTES = 16 * 1024 * 1024;

/** How much of an oversized stdin is read and dropped, so the writer sees no broken pipe, before
 * the step gives up on it (an endless stdin must not hang the step). */
const DRAIN_LIMIT_BYTES = 1024 * 1024 * 1024;

async function readStdin(step: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += (chunk as Buffer).length;
    if (size <= MAX_STDIN_BYTES) chunks.push(chunk as Buffer);
    else if (size > DRAIN_LIMIT_BYTES) break;
  }
  if (size > MAX_STDIN_BYTES) {
    throw new RuneError(
      'USAGE',
      `${step}: stdin is larger than ${MAX_STDIN_BYTES / 1024 / 1024} MiB; Concourse's request is small: put a long prompt in a file and name it in params.prompt_file`,
    );
  }
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
  // Before anything is read or written: started as root, the step becomes its folder's owner.
  const owner = becomeStepOwner(step, context.args, process.env);
  const stdin = await readStdin(step);
  const log = (line: string): void => {
    process.stderr.write(`${redact(line)}\n`);
  };
  if (owner) log(`rune: running as uid ${owner.uid}, the owner of ${owner.of}`);
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
