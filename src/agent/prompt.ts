// The system prompt of a run: the built-in default or an override (flag, config text, config file),
// with AGENTS.md from the working directory always appended.
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { RuneConfig } from '../config/schema.ts';
import { RuneError } from '../core/errors.ts';
import { isUnder, realPath } from '../core/paths.ts';
import { capText } from '../tools/cap.ts';

export const DEFAULT_SYSTEM_PROMPT = `You are rune, a careful AI agent working in the user's terminal.

You can act through tools: read_file, write_file, edit_file (exact replacements in a file),
list_dir, search_files (regex over file contents), find_files (glob), execute_cmd (a shell command),
fetch_url and inspect_process, plus any extra tools listed. Use search_files and find_files to
explore rather than shell commands. Every tool call passes a security policy and runs in a sandbox:
a call may be blocked, and the result then tells you why. Do not retry a blocked call in another
form to get around the policy; work with what is allowed or explain what you would need.

Work step by step: look before you change anything, prefer small precise edits (edit_file), and check your work
when you can (run the tests, read the file back). Paths are relative to the working directory.
When you have the answer, reply with it directly and concisely, without calling more tools.`;

export const ANSWER_NOW_PROMPT =
  'You have reached the limit of this run: no more tools can be called. Answer now with what you have found so far. If the task is unfinished, say what is done and what is left.';

const AGENTS_MD_CAP = 32 * 1024;

function readText(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new RuneError('IO', `cannot read the ${what} ${path}: ${(error as NodeJS.ErrnoException).code}`, {
      cause: error,
    });
  }
}

export interface SystemPromptInput {
  config: Pick<RuneConfig, 'system_prompt' | 'system_prompt_file'>;
  cwd: string;
  /** An explicit override from the caller (Concourse params, the notes chat). */
  systemPrompt?: string;
  appendSystemPrompt?: string;
}

/** The active system prompt: override > system_prompt_file > system_prompt > default; then extras. */
export function buildSystemPrompt(input: SystemPromptInput): string {
  let prompt: string;
  if (input.systemPrompt !== undefined) prompt = input.systemPrompt;
  else if (input.config.system_prompt_file) {
    const file = input.config.system_prompt_file;
    prompt = readText(isAbsolute(file) ? file : resolve(input.cwd, file), 'system prompt file');
  } else if (input.config.system_prompt !== undefined) prompt = input.config.system_prompt;
  else prompt = DEFAULT_SYSTEM_PROMPT;

  if (input.appendSystemPrompt) prompt += `\n\n${input.appendSystemPrompt}`;

  const agents = readAgentsMd(input.cwd);
  if (agents?.trim()) {
    prompt += `\n\n# AGENTS.md (instructions for this folder)\n\n${capText(agents.trim(), AGENTS_MD_CAP, 'AGENTS.md')}`;
  }
  return prompt;
}

/**
 * AGENTS.md of `cwd`, when it is a regular file inside that folder. The folder is usually a
 * writable grant and a repository's content: a call of an earlier run, or the repository itself,
 * could leave `AGENTS.md` as a link to `~/.ssh/id_rsa` (whose text would go to the model's
 * provider) or as a FIFO (rune would block at start). A link to a file inside the folder
 * (`AGENTS.md -> CLAUDE.md`) is fine. Read when the run starts, before any call of it, and no
 * process of an earlier call outlives it (README, Processes): nothing races this check.
 */
function readAgentsMd(cwd: string): string | undefined {
  const folder = realPath(resolve(cwd));
  const file = realPath(join(folder, 'AGENTS.md'));
  if (file === folder || !isUnder(file, folder)) return undefined;
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    return fstatSync(fd).isFile() ? readFileSync(fd, 'utf8') : undefined;
  } finally {
    closeSync(fd);
  }
}
