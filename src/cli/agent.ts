// The default command: `rune [prompt...]`. Loads the configuration (flags > env > file), reads a
// piped stdin to EOF, then runs once (pipe mode) or starts the interactive session.
import { readFileSync, readSync } from 'node:fs';
import { resolve } from 'node:path';
import type { AgentRunResult } from '../agent/types.ts';
import { deriveConfig, loadConfig } from '../config/load.ts';
import type { RuneConfig } from '../config/schema.ts';
import { RuneError } from '../core/errors.ts';
import { createLogger, type Logger } from '../core/logger.ts';
import { registerSecret } from '../core/redact.ts';
import { isTerminalFd, writeStd } from '../core/stdio.ts';
import { resolveRunPolicy } from '../policy/project.ts';
import { KEY_VARIABLES } from '../providers/credentials.ts';
import type { ChatMessage, ImageAttachment } from '../providers/types.ts';
import { type AgentFlags, FLAG_LABELS, flagsToLayer } from './flags.ts';
import { loadImage } from './images.ts';
import { findSession, type StoredSession } from './sessions.ts';

export interface AgentSetup {
  config: RuneConfig;
  configFile: string;
  logger: Logger;
  flags: AgentFlags;
  env: NodeJS.ProcessEnv;
  cwd: string;
  systemPrompt?: string;
  resumed?: StoredSession;
  /** `--resume` without an id: the session opens its picker; pipe mode takes this folder's last. */
  resumePick?: boolean;
  /** `--image` files, read: sent with the (first) prompt. */
  images?: ImageAttachment[];
}

/**
 * Reads stdin to EOF. Only called when stdin is not a terminal, so it always ends. Read straight
 * from fd 0: creating `process.stdin` (a net.Socket over a pipe) loads net and the stream machinery,
 * which a pipe run would pay only to read its prompt (bench/pipe.mjs). A non-blocking descriptor (EAGAIN) continues through the stream.
 */
export async function readStdin(stream?: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  if (!stream) {
    if (readToEnd(0, chunks)) return Buffer.concat(chunks).toString('utf8');
    stream = process.stdin;
  }
  for await (const chunk of stream)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** Whether stdin is a terminal, asked without creating `process.stdin` (core/stdio.ts). */
export function stdinIsTerminal(): boolean {
  return isTerminalFd(0);
}

/**
 * Appends what `fd` holds up to EOF to `chunks`; false when the descriptor would block (a
 * non-blocking pipe), with what was read so far kept, so the caller continues another way.
 */
export function readToEnd(fd: number, chunks: Buffer[]): boolean {
  for (;;) {
    const buffer = Buffer.allocUnsafe(64 * 1024);
    let read: number;
    try {
      read = readSync(fd, buffer, 0, buffer.length, null);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EINTR') continue;
      if (code === 'EAGAIN' || code === 'EWOULDBLOCK') return false;
      throw new RuneError(
        'IO',
        `cannot read stdin: ${code ?? (error as Error).message}; pass the prompt as arguments instead`,
        {
          cause: error,
        },
      );
    }
    if (read === 0) return true;
    chunks.push(buffer.subarray(0, read));
  }
}

/** `git diff | rune "review"`: the prompt from the arguments first, then what came on stdin. */
export function joinPrompt(args: readonly string[], stdin: string | undefined): string {
  const fromArgs = args.join(' ').trim();
  const piped = (stdin ?? '').replace(/\s+$/, '');
  if (fromArgs && piped.trim()) return `${fromArgs}\n\n${piped}`;
  return fromArgs || piped.trim();
}

/**
 * `--yes` approves, without asking, what the lists do not cover: what confirm mode would ask. Under
 * allowlist (the default) nothing is asked, so `--yes` turns it into confirm mode with every
 * question answered yes; the floor, denied_paths and the sandbox hold as ever (ADR 0036).
 */
export function withYes(config: RuneConfig, flags: AgentFlags): RuneConfig {
  if (!flags.yes || config.policy.mode !== 'allowlist') return config;
  if (flags.policy === 'allowlist') {
    throw new RuneError(
      'USAGE',
      '--yes approves what confirm mode would ask, and --policy allowlist asks nothing: give one of them',
    );
  }
  return deriveConfig(config, { policy: { ...config.policy, mode: 'confirm' } });
}

export function setupAgent(flags: AgentFlags, env: NodeJS.ProcessEnv = process.env): AgentSetup {
  // Registered before anything can print, so no error message can echo a key.
  registerSecret(flags.apiKey);
  for (const name of KEY_VARIABLES) registerSecret(env[name]);
  if (flags.systemPrompt !== undefined && flags.systemPromptFile !== undefined) {
    throw new RuneError(
      'USAGE',
      '--system-prompt and --system-prompt-file cannot be used together: both replace the system prompt; give one of them',
    );
  }
  if (flags.json && flags.output === 'ndjson') {
    throw new RuneError(
      'USAGE',
      '--json and --output ndjson cannot be used together: each is a whole output format; choose one',
    );
  }
  const loaded = loadConfig({
    env,
    flags: flagsToLayer(flags),
    flagLabels: FLAG_LABELS,
    ...(flags.config ? { file: resolve(flags.config) } : {}),
  });
  registerSecret(loaded.config.api_key);
  const cwd = process.cwd();
  // Straight to fd 2 (core/stdio.ts): the CLI never needs process.stderr's stream. The notes server
  // keeps the stream, whose writes to a full non-blocking pipe queue instead of waiting.
  const logger = createLogger({
    write: (line) => writeStd(2, line),
    verbose: flags.verbose ?? false,
    ...(flags.verbose ? {} : { level: loaded.config.log_level }),
  });
  // A repository's .rune/rune.toml narrows the policy for everything of this run: the gate, the
  // sandbox plan, fetch_url's redirect checks and /policy all see the same lists. It applies after
  // --yes, so a project that keeps allowlist keeps it.
  const config = resolveRunPolicy(withYes(loaded.config, flags), cwd, env, logger);
  let systemPrompt: string | undefined = flags.systemPrompt;
  if (flags.systemPromptFile !== undefined) {
    try {
      systemPrompt = readFileSync(resolve(cwd, flags.systemPromptFile), 'utf8');
    } catch (error) {
      throw new RuneError(
        'IO',
        `--system-prompt-file: cannot read ${flags.systemPromptFile}: ${(error as NodeJS.ErrnoException).code}; check the path (relative paths start from ${cwd})`,
        { cause: error },
      );
    }
  }
  const setup: AgentSetup = { config, configFile: loaded.file, logger, flags, env, cwd };
  if (systemPrompt !== undefined) setup.systemPrompt = systemPrompt;
  if (flags.image?.length) setup.images = flags.image.map((path) => loadImage(resolve(cwd, path), path));
  if (flags.resume === true) setup.resumePick = true;
  else if (typeof flags.resume === 'string') setup.resumed = findSession(env, flags.resume, cwd);
  return setup;
}

/** The conversation a resumed session continues from. */
export function resumedHistory(setup: AgentSetup): ChatMessage[] | undefined {
  return setup.resumed?.messages;
}

/** The JSON object of `--json`. */
export function resultJson(result: AgentRunResult): Record<string, unknown> {
  return {
    answer: result.answer,
    status: result.status,
    steps: result.steps,
    usage: {
      input_tokens: result.usage.inputTokens,
      output_tokens: result.usage.outputTokens,
      total_tokens: result.usage.totalTokens,
    },
    tool_calls: result.toolCalls.map((call) => ({
      id: call.id,
      name: call.name,
      arguments: call.arguments,
      decision: call.decision,
      rule: call.rule,
      is_error: call.isError,
      ...(call.layers ? { layers: call.layers } : {}),
      duration_ms: call.durationMs,
    })),
    model: result.model,
    session_id: result.sessionId,
    ...(result.error ? { error: result.error } : {}),
  };
}

// Session ids are UUIDs, so a reference is "last" or hex digits and dashes (a prefix will do).
const SESSION_REF = /^(last|[0-9a-f][0-9a-f-]*)$/i;

/**
 * `--resume [id]` takes an optional value, so commander hands `rune --resume "fix the tests"` the
 * prompt as the id. A value that cannot be a session reference is the prompt: resume the last one.
 */
export function splitResume(
  promptArgs: readonly string[],
  flags: AgentFlags,
): { promptArgs: string[]; flags: AgentFlags } {
  if (typeof flags.resume !== 'string' || SESSION_REF.test(flags.resume)) {
    return { promptArgs: [...promptArgs], flags };
  }
  return { promptArgs: [flags.resume, ...promptArgs], flags: { ...flags, resume: 'last' } };
}
