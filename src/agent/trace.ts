// `--trace DIR`: one JSON file per run with its events, conversation and result. Everything passes
// the secret redactor, and the API key is never part of the config copy.
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { redactValue } from '../core/redact.ts';
import type { AgentEvent, AgentRunOptions, AgentRunResult } from './types.ts';

export interface TraceInput {
  options: AgentRunOptions;
  result: AgentRunResult;
  events: AgentEvent[];
  startedAt: Date;
  provider: string | undefined;
}

export async function writeTrace(dir: string, input: TraceInput): Promise<string> {
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
  const folder = resolve(options.cwd, dir);
  // Node 20's recursive mkdir never returns for a missing path under /proc or /sys (it spins at
  // full CPU), and nothing can be written there anyway.
  if (/^\/(?:proc|sys)(?:\/|$)/.test(folder)) {
    throw new Error(`${folder} is on a kernel pseudo-filesystem, not a folder for traces`);
  }
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const stamp = input.startedAt.toISOString().replace(/[:.]/g, '-');
  const file = join(folder, `rune-${stamp}-${result.sessionId.slice(0, 8)}.json`);
  const tmp = `${file}.tmp`;
  await writeFile(tmp, `${JSON.stringify(redactValue(trace), null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, file);
  return file;
}
