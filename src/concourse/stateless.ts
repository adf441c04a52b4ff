// The stateless way (the original program's): versions are digests of answers. check runs
// source.prompt, in re-runs it and reports whether the digest still matches, out runs the put's prompt.
import type { AgentRunResult } from '../agent/types.ts';
import { RuneError } from '../core/errors.ts';
import type { Root } from '../core/fd/index.ts';
import { type AgentDeps, digestOf, runMetadata, runPrompt } from './agent.ts';
import { holdFolder, removeScratch, writeInto } from './files.ts';
import { requireDestination, scratchFolder } from './preflight.ts';
import type { InParams, Source, Version } from './schema.ts';
import type { Metadata, OutPrompt, StepOutput } from './step-types.ts';

export interface StatelessDeps extends AgentDeps {
  now(): Date;
}

function sourcePrompt(step: string, source: Source): string {
  if (source.prompt) return source.prompt;
  // The usual way here is the implicit get after a put to a resource without a prompt.
  const hint =
    step === 'in'
      ? 'set get_params: {skip_download: true} on the put, or configure source.notes to keep answers'
      : 'or configure source.notes to read stored runs';
  throw new RuneError(
    'USAGE',
    `${step}: source.prompt is not set; the stateless resource runs it on every ${step} (${hint})`,
  );
}

export async function check(deps: StatelessDeps, source: Source, given: Version | null): Promise<Version[]> {
  const prompt = sourcePrompt('check', source);
  const cwd = scratchFolder('check');
  try {
    const result = await runPrompt(deps, { step: 'check', source, prompt, cwd });
    const ref = digestOf(result.answer);
    return given?.ref === ref ? [given] : [{ ref }];
  } finally {
    removeScratch(cwd);
  }
}

export async function get(
  deps: StatelessDeps,
  source: Source,
  version: Version,
  params: InParams,
  dest: string,
): Promise<StepOutput> {
  if (params.skip_download) return { version, metadata: [{ name: 'skipped', value: 'true' }] };
  const prompt = sourcePrompt('in', source);
  // Refused before the model is paid for: a version of another shape cannot be compared with.
  if (typeof version.ref !== 'string' || !version.ref.startsWith('sha256:')) {
    throw new RuneError(
      'USAGE',
      `in: the version has no "ref": "sha256:…"; it was not made by the stateless resource (keys: ${Object.keys(version).join(', ')}); fetch a version that check or put of this resource emitted`,
    );
  }
  requireDestination(dest);
  // Held before the agent works in it: the answer goes where the destination was, or nowhere.
  const folder = holdFolder('in', dest, 'the destination');
  let result: Awaited<ReturnType<typeof runPrompt>>;
  let ref: string;
  try {
    result = await runPrompt(deps, { step: 'in', source, prompt, cwd: dest });
    ref = digestOf(result.answer);
    writeAnswer(folder, { prompt, result, ref, timestamp: deps.now() });
  } finally {
    folder.close();
  }
  const matched = version.ref === ref;
  if (!matched) {
    deps.log(`rune: the answer changed since ${version.ref ?? 'this version'}; it is now ${ref}`);
  }
  const metadata: Metadata = [
    { name: 'digest_matched', value: String(matched) },
    { name: 'ref', value: ref },
    ...runMetadata(result, deps.env),
  ];
  return { version, metadata };
}

export async function put(deps: StatelessDeps, source: Source, run: OutPrompt): Promise<StepOutput> {
  const result = await runPrompt(deps, { step: 'out', source, ...run });
  deps.log(`rune: answer:\n${result.answer}`);
  return { version: { ref: digestOf(result.answer) }, metadata: runMetadata(result, deps.env) };
}

export interface Answer {
  prompt: string;
  result: Pick<AgentRunResult, 'answer' | 'model' | 'usage' | 'status'>;
  ref: string;
  timestamp: Date;
}

/** response.txt holds the answer byte for byte; payload.json the run around it (src/concourse/files.ts). */
export function writeAnswer(dest: Root, answer: Answer): void {
  writeInto('in', dest, 'response.txt', answer.result.answer);
  const payload = {
    prompt: answer.prompt,
    response: answer.result.answer,
    ref: answer.ref,
    model: answer.result.model,
    timestamp: answer.timestamp.toISOString(),
    usage: {
      input_tokens: answer.result.usage.inputTokens,
      output_tokens: answer.result.usage.outputTokens,
      total_tokens: answer.result.usage.totalTokens,
    },
    stop_reason: answer.result.status,
  };
  writeInto('in', dest, 'payload.json', `${JSON.stringify(payload, null, 2)}\n`);
}
