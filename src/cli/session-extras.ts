// The prompt's extras: `!cmd` runs a command in the sandbox (under the policy, like the model's
// execute_cmd) and keeps its output for the next prompt; `@path` attaches a file once the policy
// allows reading it (through read_file, so the same checks and cap apply).
import { statSync } from 'node:fs';
import { runUserCall } from '../agent/user-call.ts';
import { absolutePath, homeDir } from '../core/paths.ts';
import type { ImageAttachment } from '../providers/types.ts';
import { paint } from './format.ts';
import { loadImage, looksLikeImage } from './images.ts';
import type { SessionContext } from './session-context.ts';
import { TurnView } from './session-turn.ts';

/** Runs `fn` as the session's current activity: the status row shows it, Ctrl-C cancels it. */
async function asActivity<T>(
  session: SessionContext,
  label: string,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const { state, terminal } = session;
  state.controller = new AbortController();
  state.activity = {
    label,
    since: Date.now(),
    usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    streamed: 0,
  };
  terminal.busy(true);
  try {
    return await fn(state.controller.signal);
  } finally {
    state.controller = undefined;
    state.activity = undefined;
    terminal.busy(false);
  }
}

/** One tool call made by the person, shown like the model's, under the session's policy. */
function userCall(session: SessionContext, name: string, args: Record<string, unknown>, signal: AbortSignal) {
  const { state, runtime, setup } = session;
  const view = new TurnView(session);
  return runUserCall(
    {
      config: state.config,
      cwd: setup.cwd,
      env: setup.env,
      policy: state.policy,
      executor: runtime.executor,
      registry: runtime.registry,
      signal,
      onEvent: view.onEvent,
    },
    name,
    args,
  );
}

/** `!cmd`: the command's result is kept and goes to the model with the next prompt. */
export async function shellCommand(session: SessionContext, cmd: string): Promise<void> {
  const { state, style, write } = session;
  if (!cmd.trim()) {
    write('!CMD runs a command in the sandbox; its output goes to the model with your next prompt\n');
    return;
  }
  const { output, record } = await asActivity(session, `running ${cmd}`, (signal) =>
    userCall(session, 'execute_cmd', { cmd }, signal),
  );
  if (record.decision !== 'allow') return;
  state.pendingContext.push(`I ran \`${cmd}\` in the sandbox:\n${output.content}`);
  write(`${paint(style, 'dim', '  (its output goes to the model with your next prompt)')}\n`);
}

/** Paths named as `@path` in the prompt that are files (skills and other words are left alone). */
export function mentionedFiles(prompt: string, cwd: string, env: NodeJS.ProcessEnv): string[] {
  const files: string[] = [];
  for (const match of prompt.matchAll(/(?:^|\s)@([^\s@]+)/g)) {
    const word = match[1]!.replace(/[.,;:!?)]+$/, '');
    try {
      if (statSync(absolutePath(word, cwd, homeDir(env))).isFile() && !files.includes(word)) files.push(word);
    } catch {
      // Not a file: a skill name, or just a word.
    }
  }
  return files;
}

/**
 * The prompt with each `@file` it mentions attached — a text file's content, or an image for the
 * model to see — each read only once the policy allows reading it (a refusal is shown, and that
 * file is not attached).
 */
export async function withAttachments(
  session: SessionContext,
  prompt: string,
): Promise<{ prompt: string; images: ImageAttachment[] }> {
  const files = mentionedFiles(prompt, session.setup.cwd, session.setup.env);
  const attached: string[] = [];
  const images: ImageAttachment[] = [];
  if (files.length > 0) {
    await asActivity(session, 'reading mentioned files', async (signal) => {
      for (const path of files) {
        const { output, record } = await userCall(session, 'read_file', { path }, signal);
        if (record.decision !== 'allow') continue;
        if (looksLikeImage(path)) {
          try {
            images.push(loadImage(absolutePath(path, session.setup.cwd, homeDir(session.setup.env)), path));
          } catch (error) {
            session.write(`${paint(session.style, 'red', (error as Error).message)}\n`);
          }
        } else if (!output.isError) attached.push(`<file path="${path}">\n${output.content}\n</file>`);
      }
    });
  }
  return { prompt: attached.length === 0 ? prompt : `${prompt}\n\n${attached.join('\n\n')}`, images };
}
