// The Concourse resource type (SPEC §3): check/in/out chosen by the invoked name. stdout carries
// exactly one JSON value; everything else goes to stderr, the build log.
import type { ModeContext } from '../core/bundles.ts';
import { RuneError } from '../core/errors.ts';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function run(context: ModeContext): Promise<number> {
  const text = await readStdin();
  try {
    JSON.parse(text);
  } catch (error) {
    throw new RuneError(
      'USAGE',
      `${context.invokedAs}: stdin is not valid JSON: ${(error as Error).message}`,
    );
  }
  throw new RuneError('USAGE', `${context.invokedAs}: the Concourse resource is not part of this build yet`);
}
