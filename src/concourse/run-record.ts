// A stored run as the notes store keeps it: a file `run-<time>-<hex12>[-p<key12>].md` whose
// revision 1 holds a one-line header (the run's record) and then the answer byte for byte. The
// optional `-p…` part names the put that made it (the build's identity and the put's prompt), so a
// retried put finds its own run from the file list alone (docs/adr/0004-concourse-resource.md).
import { createHash } from 'node:crypto';
import type { AgentRunResult } from '../agent/types.ts';
import { digestOf } from './agent.ts';
import { buildUrl } from './build-url.ts';
import type { OutPrompt } from './step-types.ts';

/** What a stored run keeps besides the answer; `ref` is the digest of the answer. */
export interface RunRecord {
  v: 1;
  ref: string;
  prompt: string;
  model: string;
  timestamp: string;
  usage: { input_tokens: number; output_tokens: number; total_tokens: number };
  stop_reason: string;
  steps: number;
  tool_calls: number;
  build_url?: string;
  /** The file's own name (runs stored before it was kept have none). */
  file?: string;
  /** What the build page calls the prompt (a prompt_file's path); `prompt` when absent. */
  prompt_name?: string;
  /** The put that stored it: see putKey. */
  put_key?: string;
}

const HEADER_START = '<!-- rune-run ';
const HEADER_END = ' -->';
export const RUN_FILE = /^run-.+\.md$/;

/** An HTML comment renders as nothing in the notes UI, so a person sees just the answer. */
export function encodeRun(record: RunRecord, answer: string): string {
  // JSON never holds < or > outside strings; escaping them inside keeps `-->` out of the comment.
  const json = JSON.stringify(record).replace(/</g, '\\u003c').replace(/>/g, '\\u003e');
  return `${HEADER_START}${json}${HEADER_END}\n\n${answer}`;
}

export function decodeRun(content: string): { record: RunRecord; answer: string } | undefined {
  if (!content.startsWith(HEADER_START)) return undefined;
  const end = content.indexOf('\n');
  if (end < 0 || content[end + 1] !== '\n') return undefined;
  const header = content.slice(0, end);
  if (!header.endsWith(HEADER_END)) return undefined;
  try {
    const record = JSON.parse(header.slice(HEADER_START.length, -HEADER_END.length)) as RunRecord;
    if (record.v !== 1 || typeof record.ref !== 'string') return undefined;
    return { record, answer: content.slice(end + 2) };
  } catch {
    return undefined;
  }
}

/**
 * The identity of one put of one build: Concourse runs a retried put (`attempts:`, a worker lost
 * mid-step) in the same build, with the same BUILD_ID; a re-run build has a new one. Undefined
 * outside a build, where nothing can tell a retry from a new put.
 */
export function putKey(env: NodeJS.ProcessEnv, run: OutPrompt): string | undefined {
  if (!env.BUILD_ID) return undefined;
  const parts = [
    env.ATC_EXTERNAL_URL ?? '',
    env.BUILD_TEAM_NAME ?? '',
    env.BUILD_ID,
    run.prompt,
    run.systemPrompt ?? null,
    run.appendSystemPrompt ?? null,
  ];
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

/** The `-p<key12>` part of a put's run file name. */
export function putMark(key: string): string {
  return `-p${key.slice(0, 12)}.md`;
}

export function runFileName(now: Date, ref: string, key?: string): string {
  const stamp = now.toISOString().replace(/:/g, '-').replace('.', '-');
  const hex = ref.slice('sha256:'.length, 'sha256:'.length + 12);
  return `run-${stamp}-${hex}${key ? putMark(key) : '.md'}`;
}

export interface RecordContext {
  prompt: string;
  promptName: string;
  now: Date;
  env: NodeJS.ProcessEnv;
  putKey?: string;
}

export function recordOf(result: AgentRunResult, context: RecordContext): RunRecord {
  const ref = digestOf(result.answer);
  const record: RunRecord = {
    v: 1,
    ref,
    prompt: context.prompt,
    model: result.model,
    timestamp: context.now.toISOString(),
    usage: {
      input_tokens: result.usage.inputTokens,
      output_tokens: result.usage.outputTokens,
      total_tokens: result.usage.totalTokens,
    },
    stop_reason: result.status,
    steps: result.steps,
    tool_calls: result.toolCalls.length,
    file: runFileName(context.now, ref, context.putKey),
  };
  if (context.promptName !== context.prompt) record.prompt_name = context.promptName;
  if (context.putKey) record.put_key = context.putKey;
  const url = buildUrl(context.env);
  if (url) record.build_url = url;
  return record;
}
