// The stateless way (the original program's): versions are digests of answers. check runs
// source.prompt; in re-runs it and, since a get must fetch exactly the version asked for, writes
// the answer only when its digest is that version's (else it fails: nothing keeps old answers);
// out runs the put's prompt.
import { RuneError } from '../core/errors.ts';
import type { Root } from '../core/fd/index.ts';
import { type AgentDeps, digestOf, runMetadata, runPrompt } from './agent.ts';
import { holdFolder, removeScratch, writeInto } from './files.ts';
import { answerMetadata } from './metadata.ts';
import { requireDestination, scratchFolder } from './preflight.ts';
import type { InParams, Source, Version } from './schema.ts';
import type { Metadata, OutPrompt, StepOutput } from './step-types.ts';

export interface StatelessDeps extends AgentDeps {
  now(): Date;
}

/** The prompt `in` re-runs; the usual way here without one is the implicit get after a put. */
function getPrompt(source: Source): string {
  if (source.prompt) return source.prompt;
  throw new RuneError(
    'USAGE',
    'in: source.prompt is not set; the stateless resource runs it on every in (set no_get: true on the put, or get_params: {skip_download: true}; or configure source.notes to keep answers)',
  );
}

export async function check(deps: StatelessDeps, source: Source, given: Version | null): Promise<Version[]> {
  if (!source.prompt) {
    // A put-only resource: Concourse still checks it (unless check_every: never), and a failing
    // check would show it as errored. Nothing to run, so no versions.
    deps.log('rune: no source.prompt: nothing to check (a put-only resource; check_every: never skips this)');
    return [];
  }
  const prompt = source.prompt;
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
  const prompt = getPrompt(source);
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
    if (ref !== version.ref) throw unreproducible(version.ref, ref);
    // Only what the version determines: asked again for it, in writes the same bytes. The run's
    // usage and time differ on every fetch; they go into the metadata, not the files.
    writeAnswer(folder, {
      prompt,
      response: result.answer,
      ref,
      model: result.model,
      timestamp: null,
      usage: null,
      stop_reason: result.status,
    });
  } finally {
    folder.close();
  }
  const metadata: Metadata = [
    { name: 'ref', value: ref },
    ...answerMetadata(result.answer, prompt),
    ...runMetadata(result, deps.env),
  ];
  return { version, metadata };
}

/** A get must fetch the version it is given or fail (Concourse caches what it fetched). */
function unreproducible(asked: string, now: string): RuneError {
  return new RuneError(
    'NOT_FOUND',
    `in: version ${asked} cannot be fetched: source.prompt now answers ${now}, and the stateless resource keeps no answers; to get any version again keep them in a notes store (source.notes), and to skip the get after a put use no_get: true (or get_params: {skip_download: true})`,
  );
}

export async function put(deps: StatelessDeps, source: Source, run: OutPrompt): Promise<StepOutput> {
  const result = await runPrompt(deps, { step: 'out', source, ...run });
  deps.log(`rune: answer:\n${result.answer}`);
  const metadata = [...answerMetadata(result.answer, run.name), ...runMetadata(result, deps.env)];
  return { version: { ref: digestOf(result.answer) }, metadata };
}

/** payload.json of a get, in this key order; response.txt holds `response` byte for byte. */
export interface AnswerPayload {
  prompt: string;
  response: string;
  ref: string;
  model: string;
  /** When the run was made; null where a get cannot know it (stateless). */
  timestamp: string | null;
  usage: { input_tokens: number; output_tokens: number; total_tokens: number } | null;
  stop_reason: string;
}

/** response.txt holds the answer byte for byte; payload.json the run around it (src/concourse/files.ts). */
export function writeAnswer(dest: Root, payload: AnswerPayload): void {
  writeInto('in', dest, 'response.txt', payload.response);
  const ordered: AnswerPayload = {
    prompt: payload.prompt,
    response: payload.response,
    ref: payload.ref,
    model: payload.model,
    timestamp: payload.timestamp,
    usage: payload.usage,
    stop_reason: payload.stop_reason,
  };
  writeInto('in', dest, 'payload.json', `${JSON.stringify(ordered, null, 2)}\n`);
}
