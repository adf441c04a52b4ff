// Which agent runs the note chats. Until the agent loop is part of the build the chat answers with
// a clear error instead of failing to start the server.
import type { RunAgent } from './chat.ts';

export function agentRunner(): RunAgent | undefined {
  return undefined;
}
