// `--trace DIR`: one JSON file per run with its events, conversation and result. Everything passes
// the secret redactor, and the API key is never part of the config copy. The folder is made and
// held by descriptor when the run starts, before any tool call: it may lie under a writable grant
// (`--trace traces` in the project), where a call could replace it by a link or plant a FIFO, so
// the trace is written into the folder held then, through no link (src/core/fd, ADR 0034).
// biome-ignore lint/style/noRestrictedImports: the trace folder is made when the run starts, by the person's path (as the grants are pinned then); written later only through the folder held
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { Root, replaceFile } from '../core/fd/index.ts';
import { realPath } from '../core/paths.ts';
import { redactValue } from '../core/redact.ts';
import type { AgentEvent, AgentRunOptions, AgentRunResult } from './types.ts';

export interface TraceInput {
  options: AgentRunOptions;
  result: AgentRunResult;
  events: AgentEvent[];
  startedAt: Date;
  provider: string | undefined;
}

/**
 * Makes the trace folder `dir` (relative to `cwd`) and holds it. Called when the run starts: the
 * path is then still the person's (a link in it is theirs, as for the grants pinned then).
 */
export function openTraceFolder(cwd: string, dir: string): Root {
  const folder = resolve(cwd, dir);
  // Node 20's recursive mkdir never returns for a missing path under /proc or /sys (it spins at
  // full CPU), and nothing can be written there anyway.
  if (/^\/(?:proc|sys)(?:\/|$)/.test(folder)) {
    throw new Error(`${folder} is on a kernel pseudo-filesystem, not a folder for traces`);
  }
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  return Root.open(realPath(folder));
}

/** Writes the run's trace into the folder held since its start; returns the file's path. */
export function writeTrace(folder: Root, input: TraceInput): string {
  const { options, result } = input;
  const { api_key: _key, ...config } = options.config;
  const trace = {
    version: 1,
    sessionId: result.sessionId,
    startedAt: input.startedAt.toISOString(),
    endedAt: new Date().toISOString(),
    cwd: options.cwd,
    provider: input.provider,
    model: result.model,
    prompt: options.prompt,
    status: result.status,
    steps: result.steps,
    usage: result.usage,
    error: result.error,
    answer: result.answer,
    toolCalls: result.toolCalls,
    events: input.events,
    messages: result.messages,
    config,
  };
  const stamp = input.startedAt.toISOString().replace(/[:.]/g, '-');
  const name = `rune-${stamp}-${result.sessionId.slice(0, 8)}.json`;
  // A temporary file made with O_EXCL beside it, renamed over the name; anything but a regular
  // file a call left at that name (a link, a FIFO) is refused by name, never written through.
  replaceFile(folder, name, `${JSON.stringify(redactValue(trace), null, 2)}\n`, { mode: 0o600 });
  return folder.where(name);
}
