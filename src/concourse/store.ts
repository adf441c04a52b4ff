// The notes-store way: every run is a file `run-….md` of a note on a `rune notes` server, its
// revision 1 holding a one-line header (the run's record) and then the answer byte for byte.
// Versions are {run: <file id>, ref}; `in` only reads revision 1 back, so a get is deterministic.
// With `watch`, the versions are instead the revisions of one file of the note.
import type { AgentRunResult } from '../agent/types.ts';
import { isRuneError, RuneError } from '../core/errors.ts';
import { type AgentDeps, digestOf, runMetadata, runPrompt } from './agent.ts';
import { buildUrl } from './build-url.ts';
import { holdFolder, removeScratch, writeInto } from './files.ts';
import { type FetchFn, type NoteFile, NotesClient } from './notes-client.ts';
import { requireDestination, scratchFolder } from './preflight.ts';
import type { InParams, NotesSource, Source, Version } from './schema.ts';
import { writeAnswer } from './stateless.ts';
import type { Metadata, OutPrompt, StepOutput } from './step-types.ts';

export interface StoreDeps extends AgentDeps {
  now(): Date;
  fetch?: FetchFn;
}

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
}

const HEADER_START = '<!-- rune-run ';
const HEADER_END = ' -->';
const RUN_FILE = /^run-.+\.md$/;
/** How many runs back check looks for the previous answer to its prompt. */
const MAX_LOOKBACK = 50;

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

function runFileName(now: Date, ref: string): string {
  const stamp = now.toISOString().replace(/:/g, '-').replace('.', '-');
  return `run-${stamp}-${ref.slice('sha256:'.length, 'sha256:'.length + 12)}.md`;
}

function recordOf(prompt: string, result: AgentRunResult, now: Date, env: NodeJS.ProcessEnv): RunRecord {
  const record: RunRecord = {
    v: 1,
    ref: digestOf(result.answer),
    prompt,
    model: result.model,
    timestamp: now.toISOString(),
    usage: {
      input_tokens: result.usage.inputTokens,
      output_tokens: result.usage.outputTokens,
      total_tokens: result.usage.totalTokens,
    },
    stop_reason: result.status,
    steps: result.steps,
    tool_calls: result.toolCalls.length,
  };
  const url = buildUrl(env);
  if (url) record.build_url = url;
  return record;
}

async function storeRun(
  deps: StoreDeps,
  notes: NotesClient,
  prompt: string,
  result: AgentRunResult,
): Promise<Version> {
  const now = deps.now();
  const record = recordOf(prompt, result, now, deps.env);
  const file = await notes.createFile(runFileName(now, record.ref), encodeRun(record, result.answer));
  deps.log(`rune: stored as ${file.name} in note "${notes.note}"`);
  return { run: String(file.id), ref: record.ref };
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
  if (notesSource.watch) return checkWatch(notes, notesSource.watch, given);

  if (source.prompt) {
    const cwd = scratchFolder('check');
    try {
      await ensureNote(notes);
      const result = await runPrompt(deps, { step: 'check', source, prompt: source.prompt, cwd });
      const previous = await latestRunOf(deps, notes, source.prompt);
      if (previous?.ref === digestOf(result.answer)) {
        deps.log('rune: the answer is unchanged since the latest run of this prompt');
      } else {
        await storeRun(deps, notes, source.prompt, result);
      }
    } finally {
      removeScratch(cwd);
    }
  } else if (!(await notes.noteExists())) {
    throw new RuneError('NOT_FOUND', `check: note "${notes.note}" does not exist on ${notesSource.url}`);
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

async function checkWatch(notes: NotesClient, watch: string, given: Version | null): Promise<Version[]> {
  const revisions = (await notes.revisions(watch)).sort((a, b) => a.revision - b.revision);
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
      result: {
        answer: run.answer,
        model: run.record.model,
        status: run.record.stop_reason as AgentRunResult['status'],
        usage: {
          inputTokens: run.record.usage.input_tokens,
          outputTokens: run.record.usage.output_tokens,
          totalTokens: run.record.usage.total_tokens,
        },
      },
      ref,
      timestamp: new Date(run.record.timestamp),
    });
  } finally {
    folder.close();
  }
  const metadata: Metadata = [
    { name: 'model', value: run.record.model },
    { name: 'stop_reason', value: run.record.stop_reason },
    { name: 'stored_at', value: run.record.timestamp },
    { name: 'tokens', value: String(run.record.usage.total_tokens) },
  ];
  if (run.record.build_url) metadata.push({ name: 'stored_by', value: run.record.build_url });
  return { version, metadata };
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
  const result = await runPrompt(deps, { step: 'out', source, ...run });
  deps.log(`rune: answer:\n${result.answer}`);
  const version = await storeRun(deps, notes, run.prompt, result);
  const metadata = runMetadata(result, deps.env);
  metadata.push({ name: 'note', value: notes.note });
  return { version, metadata };
}
