// A resumed session's conversation shown again before its prompt: each prompt, each answer
// rendered as Markdown, each tool call as one dim line with the start of its result.
import { terminalLine, terminalText } from '../core/terminal-text.ts';
import { fitLine, formatArguments, paint } from './format.ts';
import type { SessionContext } from './session-context.ts';
import type { StoredSession } from './sessions.ts';
import { highlighter } from './tui/highlight-loader.ts';
import { renderMarkdown } from './tui/markdown.ts';

/** Prompts, answers and tool calls of `stored`, most recent last; attachments are left out. */
export function replayTranscript(session: SessionContext, stored: StoredSession): void {
  const { style, write, terminal } = session;
  const width = terminal.screen.columns;
  const when = stored.updatedAt.slice(0, 16).replace('T', ' ');
  write(
    `${paint(style, 'dim', `── resumed session ${stored.id.slice(0, 8)} from ${when} (${stored.messages.length} messages) ──`)}\n`,
  );
  const highlight = highlighter();
  for (const message of stored.messages) {
    switch (message.role) {
      case 'user': {
        if (message.content.startsWith('[rune]')) break;
        const prompt = message.content.split(/\n\n<file path=/)[0]!;
        const lines = terminalText(prompt).split('\n');
        const shown = lines.length > 6 ? [...lines.slice(0, 4), `… ${lines.length - 4} more lines`] : lines;
        write(`${paint(style, 'cyan', '›')} ${shown.join('\n  ')}\n`);
        break;
      }
      case 'assistant':
        if (message.content.trim())
          write(
            `${renderMarkdown(terminalText(message.content), { style, width, ...(highlight ? { highlight } : {}) }).join('\n')}\n`,
          );
        for (const call of message.toolCalls ?? [])
          write(
            `${fitLine(paint(style, 'dim', `> ${call.name} ${formatArguments(call.arguments)}`), width)}\n`,
          );
        break;
      case 'tool':
        write(`${fitLine(paint(style, 'dim', `  ↳ ${terminalLine(message.content)}`), width)}\n`);
        break;
      default:
        break;
    }
  }
  write(`${paint(style, 'dim', '── end of the earlier conversation ──')}\n`);
}
