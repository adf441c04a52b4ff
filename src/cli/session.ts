// The interactive session (placeholder until the terminal UI lands).
import { RuneError } from '../core/errors.ts';
import type { AgentSetup } from './agent.ts';

export async function runSession(_setup: AgentSetup): Promise<number> {
  throw new RuneError('USAGE', 'the interactive session is not part of this build yet; pass a prompt');
}
