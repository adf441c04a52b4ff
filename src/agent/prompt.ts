// The system prompt of a run: the built-in default or an override (flag, config text, config file),
// with AGENTS.md from the working directory always appended.
import { closeSync, constants, fstatSync, openSync, readFileSync, type Stats } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { settingName } from '../config/load.ts';
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
  else if (input.config.system_prompt_file) prompt = readPromptFile(input);
  else if (input.config.system_prompt !== undefined) prompt = input.config.system_prompt;
  else prompt = DEFAULT_SYSTEM_PROMPT;

  if (input.appendSystemPrompt) prompt += `\n\n${input.appendSystemPrompt}`;

  const agents = readAgentsMd(input.cwd);
  if (agents?.trim()) {
    prompt += `\n\n# AGENTS.md (instructions for this folder)\n\n${capText(agents.trim(), AGENTS_MD_CAP, 'AGENTS.md')}`;
  }
  return prompt;
}

/**
 * `system_prompt_file`, read as AGENTS.md is: a relative path (resolved in the working folder, usually
 * a writable grant) must really lead to a file inside that folder, so a link planted there cannot
 * send `~/.ssh/id_rsa` to the model's provider; an absolute path the person configured may be a
 * link (dotfile managers). Either way it must be a regular file, opened without blocking (a FIFO
 * would hold rune at start).
 */
function readPromptFile(input: SystemPromptInput): string {
  const file = input.config.system_prompt_file as string;
  const setting = settingName(
    input.config as RuneConfig,
    'system_prompt_file',
    'system_prompt_file in rune.toml',
  );
  const read = isAbsolute(file) ? readRegular(file, false) : readInside(input.cwd, file);
  if (read.kind === 'text') return read.text;
  if (read.kind === 'missing')
    throw new RuneError('IO', `cannot read the system prompt file ${file} (${setting}): ${read.code}`);
  throw new RuneError(
    'CONFIG_INVALID',
    `${setting} = ${JSON.stringify(file)}: ${read.reason}; name a regular file${isAbsolute(file) ? '' : ' inside the working folder, or give an absolute path'}`,
  );
}

type Read =
  | { kind: 'text'; text: string }
  | { kind: 'missing'; code: string }
  | { kind: 'refused'; reason: string };

/**
 * `name` (relative) in `cwd` when it resolves to a regular file inside that folder: a link to a file
 * inside it is followed, one leading out is refused.
 */
function readInside(cwd: string, name: string): Read {
  const folder = realPath(resolve(cwd));
  const file = realPath(resolve(folder, name));
  if (file === folder || !isUnder(file, folder))
    return { kind: 'refused', reason: `it leads out of the working folder ${folder} (to ${file})` };
  return readRegular(file, true);
}

/** A regular file's text, opened with O_NONBLOCK (and O_NOFOLLOW when `noFollow`): nothing else is read. */
function readRegular(path: string, noFollow: boolean): Read {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | (noFollow ? constants.O_NOFOLLOW : 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
    if (code === 'ELOOP') return { kind: 'refused', reason: 'it is a symbolic link' };
    return { kind: 'missing', code };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { kind: 'refused', reason: `it is ${kindOf(stat)}, not a regular file` };
    return { kind: 'text', text: readFileSync(fd, 'utf8') };
  } finally {
    closeSync(fd);
  }
}

function kindOf(stat: Stats): string {
  if (stat.isDirectory()) return 'a folder';
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isSocket()) return 'a socket';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
  return 'not a regular file';
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
  const read = readInside(cwd, 'AGENTS.md');
  return read.kind === 'text' ? read.text : undefined;
}
