// Which agent runs the note chats: the same run loop as the CLI (policy, sandbox, providers), with
// the notes tools passed in as extra tools by the chat service.
import { runAgent } from '../agent/run.ts';
import type { RunAgent } from './chat.ts';

export function agentRunner(): RunAgent {
  return runAgent;
}
