// The notes-store way: every run is a file `run-….md` of a note on a `rune notes` server (its
// format in run-record.ts). Versions are {run: <file id>, ref}; `in` only reads revision 1 back, so
// a get is deterministic. With `watch`, the versions are instead the revisions of one file of the note.
import type { AgentRunResult } from '../agent/types.ts';
import { isRuneError, RuneError } from '../core/errors.ts';
import { type AgentDeps, digestOf, runMetadata, runPrompt } from './agent.ts';
import { holdFolder, removeScratch, writeInto } from './files.ts';
import { answerMetadata, noteFileUrl } from './metadata.ts';
import { type FetchFn, type NoteFile, NotesClient, type Revision } from './notes-client.ts';
import { requireDestination, scratchFolder } from './preflight.ts';
import {
  decodeRun,
  encodeRun,
  putKey,
  putMark,
  type RecordContext,
  RUN_FILE,
  type RunRecord,
  recordOf,
} from './run-record.ts';
import type { InParams, NotesSource, Source, Version } from './schema.ts';
import { writeAnswer } from './stateless.ts';
import type { Metadata, OutPrompt, StepOutput } from './step-types.ts';

export interface StoreDeps extends AgentDeps {
  now(): Date;
  fetch?: FetchFn;
}

/** How many runs back check looks for the previous answer to its prompt. */
const MAX_LOOKBACK = 50;

function client(deps: StoreDeps, notes: NotesSource): NotesClient {
  return new NotesClient({
    ...notes,
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
}

function refuseWatchWithPrompt(step: string, source: Source): void {
  if (source.notes?.watch && source.prompt) {
    throw new RuneError(
      'USAGE',
      `${step}: source.prompt and source.notes.watch exclude each other: with watch the versions are the revisions of ${source.notes.watch}`,
    );
  }
}

async function ensureNote(notes: NotesClient): Promise<void> {
  if (await notes.noteExists()) return;
  try {
    await notes.createNote();
  } catch (error) {
    if (isRuneError(error) && error.code !== 'NOT_FOUND') {
      throw new RuneError(
        'IO',
        `note "${notes.note}" does not exist and could not be created (an admin token can create it, or create it in the notes UI): ${error.message}`,
        { cause: error },
      );
    }
    throw error;
  }
}

async function storeRun(
  deps: StoreDeps,
  notes: NotesClient,
  result: AgentRunResult,
  context: Omit<RecordContext, 'now' | 'env'>,
): Promise<{ version: Version; url: string }> {
  const record = recordOf(result, { ...context, now: deps.now(), env: deps.env });
  const file = await notes.createFile(record.file ?? '', encodeRun(record, result.answer));
  const url = noteFileUrl(notes.baseUrl, notes.note, file.name);
  deps.log(`rune: stored as ${file.name} in note "${notes.note}": ${url}`);
  return { version: { run: String(file.id), ref: record.ref }, url };
}

/** Run files oldest first (ids only grow). */
async function runFiles(notes: NotesClient): Promise<NoteFile[]> {
  return (await notes.listFiles()).filter((file) => RUN_FILE.test(file.name)).sort((a, b) => a.id - b.id);
}

async function readRun(
  notes: NotesClient,
  id: string | number,
): Promise<{ record: RunRecord; answer: string }> {
  const revision = await notes.revision(id, 1);
  const run = decodeRun(revision.content);
  if (!run) throw new RuneError('IO', `note "${notes.note}": file ${id} is not a stored run`);
  return run;
}

/** Puts store runs too: an unchanged answer is judged against the newest run of the same prompt. */
async function latestRunOf(
  deps: StoreDeps,
  notes: NotesClient,
  prompt: string,
): Promise<RunRecord | undefined> {
  const files = await runFiles(notes);
  for (const file of files.reverse().slice(0, MAX_LOOKBACK)) {
    const run = await readRunSafe(deps, notes, file);
    if (run?.record.prompt === prompt) return run.record;
  }
  return undefined;
}

/** The given version and everything after it; the latest alone when there is no (valid) given one. */
function fromGiven<T>(items: T[], index: number): T[] {
  if (index >= 0) return items.slice(index);
  return items.length > 0 ? [items[items.length - 1]!] : [];
}

export async function check(
  deps: StoreDeps,
  source: Source,
  notesSource: NotesSource,
  given: Version | null,
): Promise<Version[]> {
  refuseWatchWithPrompt('check', source);
  const notes = client(deps, notesSource);
  if (notesSource.watch) return checkWatch(deps, notes, notesSource.watch, given);

  if (source.prompt) {
    const cwd = scratchFolder('check');
    try {
      await ensureNote(notes);
      const result = await runPrompt(deps, { step: 'check', source, prompt: source.prompt, cwd });
      const previous = await latestRunOf(deps, notes, source.prompt);
      if (previous?.ref === digestOf(result.answer)) {
        deps.log('rune: the answer is unchanged since the latest run of this prompt');
      } else {
        await storeRun(deps, notes, result, { prompt: source.prompt, promptName: source.prompt });
      }
    } finally {
      removeScratch(cwd);
    }
  } else if (!(await notes.noteExists())) {
    // A new pipeline may come before its note: no versions yet is not an error (Concourse would
    // show the resource as failing until someone creates the note).
    deps.log(`rune: note "${notes.note}" does not exist on ${notes.baseUrl} yet: no versions until it does`);
    return [];
  }

  const files = await runFiles(notes);
  const index = given?.run === undefined ? -1 : files.findIndex((file) => String(file.id) === given.run);
  const versions: Version[] = [];
  for (const file of fromGiven(files, index)) {
    const run = await readRunSafe(deps, notes, file);
    if (run) versions.push({ run: String(file.id), ref: run.record.ref });
  }
  return versions;
}

async function readRunSafe(
  deps: StoreDeps,
  notes: NotesClient,
  file: NoteFile,
): Promise<{ record: RunRecord; answer: string } | undefined> {
  try {
    return await readRun(notes, file.id);
  } catch (error) {
    if (!isRuneError(error) || error.code === 'INTERNAL') throw error;
    deps.log(`rune: skipping ${file.name}: ${error.message}`);
    return undefined;
  }
}

async function checkWatch(
  deps: StoreDeps,
  notes: NotesClient,
  watch: string,
  given: Version | null,
): Promise<Version[]> {
  let listed: Revision[];
  try {
    listed = await notes.revisions(watch);
  } catch (error) {
    if (!isRuneError(error) || error.code !== 'NOT_FOUND') throw error;
    // The note or the file is not there (yet): no versions until someone creates it.
    deps.log(`rune: ${watch} does not exist in note "${notes.note}" yet: no versions until it does`);
    return [];
  }
  const revisions = listed.sort((a, b) => a.revision - b.revision);
  const versions = revisions.map((revision) => ({ revision: String(revision.revision) }));
  const index = given?.revision === undefined ? -1 : versions.findIndex((v) => v.revision === given.revision);
  return fromGiven(versions, index);
}

export async function get(
  deps: StoreDeps,
  notesSource: NotesSource,
  version: Version,
  params: InParams,
  dest: string,
): Promise<StepOutput> {
  if (params.skip_download) return { version, metadata: [{ name: 'skipped', value: 'true' }] };
  const notes = client(deps, notesSource);
  requireDestination(dest);
  if (notesSource.watch) return getWatched(notes, notesSource.watch, version, dest);

  const id = version.run;
  if (id === undefined || !/^\d+$/.test(id)) {
    throw new RuneError(
      'USAGE',
      'in: the version has no numeric "run"; it was not made by a notes store resource',
    );
  }
  let run: { record: RunRecord; answer: string };
  try {
    run = await readRun(notes, id);
  } catch (error) {
    if (isRuneError(error) && error.code === 'NOT_FOUND') {
      throw new RuneError(
        'NOT_FOUND',
        `in: run ${id} is gone from note "${notes.note}"; it cannot be fetched again`,
        {
          cause: error,
        },
      );
    }
    throw error;
  }
  const ref = digestOf(run.answer);
  if (ref !== run.record.ref || (version.ref !== undefined && version.ref !== ref)) {
    throw new RuneError(
      'IO',
      `in: run ${id} in note "${notes.note}" does not match its version (${version.ref})`,
    );
  }
  const folder = holdFolder('in', dest, 'the destination');
  try {
    writeAnswer(folder, {
      prompt: run.record.prompt,
      response: run.answer,
      ref,
      model: run.record.model,
      timestamp: run.record.timestamp,
      usage: run.record.usage,
      stop_reason: run.record.stop_reason,
    });
  } finally {
    folder.close();
  }
  const metadata = storedMetadata(notes, run, run.record.file);
  if (run.record.build_url) metadata.push({ name: 'stored_by', value: run.record.build_url });
  return { version, metadata };
}

/** What the build page shows of a stored run: its answer, prompt, model, time, tokens and link. */
function storedMetadata(
  notes: NotesClient,
  run: { record: RunRecord; answer: string },
  file: string | undefined,
): Metadata {
  const metadata: Metadata = [
    ...answerMetadata(run.answer, run.record.prompt_name ?? run.record.prompt),
    { name: 'model', value: run.record.model },
    { name: 'stop_reason', value: run.record.stop_reason },
    { name: 'stored_at', value: run.record.timestamp },
    { name: 'tokens', value: String(run.record.usage.total_tokens) },
  ];
  if (file) metadata.push({ name: 'run_url', value: noteFileUrl(notes.baseUrl, notes.note, file) });
  return metadata;
}

async function getWatched(
  notes: NotesClient,
  watch: string,
  version: Version,
  dest: string,
): Promise<StepOutput> {
  const number = Number(version.revision);
  if (!Number.isInteger(number) || number < 1) {
    throw new RuneError(
      'USAGE',
      `in: the version has no "revision" of ${watch}; it was not made by this watch`,
    );
  }
  const revision = await notes.revision(watch, number);
  const folder = holdFolder('in', dest, 'the destination');
  const payload = {
    note: notes.note,
    file: watch,
    revision: revision.revision,
    author: revision.author,
    timestamp: revision.created_at,
    ref: digestOf(revision.content),
  };
  try {
    writeInto('in', folder, watch, revision.content);
    writeInto('in', folder, 'payload.json', `${JSON.stringify(payload, null, 2)}\n`);
  } finally {
    folder.close();
  }
  return {
    version,
    metadata: [
      { name: 'file', value: watch },
      { name: 'author', value: revision.author },
      { name: 'saved_at', value: revision.created_at },
    ],
  };
}

export async function put(
  deps: StoreDeps,
  source: Source,
  notesSource: NotesSource,
  run: OutPrompt,
): Promise<StepOutput> {
  if (notesSource.watch) {
    throw new RuneError(
      'USAGE',
      `out: this resource watches ${notesSource.watch} (its versions are that file's revisions); put to a notes resource without watch to store runs`,
    );
  }
  refuseWatchWithPrompt('out', source);
  const notes = client(deps, notesSource);
  await ensureNote(notes);
  const key = putKey(deps.env, run);
  const earlier = key ? await runOfPut(deps, notes, key) : undefined;
  if (earlier) return earlier;
  const result = await runPrompt(deps, { step: 'out', source, ...run });
  deps.log(`rune: answer:\n${result.answer}`);
  const stored = await storeRun(deps, notes, result, {
    prompt: run.prompt,
    promptName: run.name,
    ...(key ? { putKey: key } : {}),
  });
  const metadata = [
    ...answerMetadata(result.answer, run.name),
    ...runMetadata(result, deps.env),
    { name: 'note', value: notes.note },
    { name: 'run_url', value: stored.url },
  ];
  return { version: stored.version, metadata };
}

/**
 * The run this very put already stored: Concourse retries a put in the same build (`attempts:`, a
 * lost worker), and a put must be idempotent, so the retry emits that run instead of a second one.
 */
async function runOfPut(deps: StoreDeps, notes: NotesClient, key: string): Promise<StepOutput | undefined> {
  const mark = putMark(key);
  const candidates = (await runFiles(notes)).filter((file) => file.name.endsWith(mark)).reverse();
  for (const file of candidates) {
    const stored = await readRunSafe(deps, notes, file);
    if (stored?.record.put_key !== key) continue;
    deps.log(
      `rune: this put already stored ${file.name} in this build (BUILD_ID ${deps.env.BUILD_ID}); emitting that run again instead of running the prompt twice`,
    );
    deps.log(`rune: answer:\n${stored.answer}`);
    const metadata = storedMetadata(notes, stored, file.name);
    metadata.push({ name: 'note', value: notes.note }, { name: 'retried', value: 'true' });
    return { version: { run: String(file.id), ref: stored.record.ref }, metadata };
  }
  return undefined;
}
