// The notes-store resource against a real `rune notes` process and the scripted model: check → in
// → out round trip, in returns the stored answer byte for byte and never re-runs, a deleted run
// fails the get, and `watch` turns edits made through the notes API into new versions.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockLlm, startMockLlm } from '../helpers/mock-llm.ts';
import { logIn, mintToken, type NotesProcess, startNotesProcess } from '../helpers/notes.ts';
import { tempDir } from '../helpers/rune.ts';
import { BUILD_URL, protocolValue, resourceDir } from './concourse-harness.ts';

const KEY = 'sk-proj-storeSecretKey0123456789abcdefgh';
const resource = resourceDir();
let mock: MockLlm;
let notes: NotesProcess;
let notesUrl: string;
let token: string;

async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${notesUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} → ${response.status} ${text}`);
  return JSON.parse(text);
}

beforeAll(async () => {
  mock = await startMockLlm();
  const home = tempDir('rune-notes-home-');
  writeFileSync(join(home, 'rune.toml'), '[notes.local]\nadmins = ["ada:ada-password-1"]\n');
  notes = await startNotesProcess({ home });
  notesUrl = notes.url;
  token = await mintToken(notesUrl, await logIn(notesUrl, 'ada', 'ada-password-1'), 'concourse', 'admin');
}, 60_000);

afterAll(async () => {
  await notes?.stop();
  await mock?.close();
});

const sha = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;
type Output = { version: Record<string, string>; metadata: { name: string; value: string }[] };

function source(note: string, extra: Record<string, unknown> = {}) {
  return {
    api_key: KEY,
    base_url: mock.baseUrl,
    model: 'mock-model',
    notes: { url: notesUrl, token, note },
    ...extra,
  };
}

/** Runs a step and checks what every step must: secrets stay out of the build log. */
async function step(name: 'check' | 'in' | 'out', input: unknown, folder?: string) {
  const result = await resource.step(name, input, folder ? { folder } : {});
  expect(result.stderr).not.toContain(KEY);
  expect(result.stderr).not.toContain(token);
  return result;
}

// Bytes a careless store would change: blank lines, trailing spaces, CR, a fake header, non-ASCII.
const STORED = '\n\nFirst answer.  \r\n\t<!-- rune-run {"v":1} -->\n✓ ünïcode\n\n';

describe('notes store', () => {
  it('round trip: check → in (stored bytes, no re-run) → out → check lists what out emitted', async () => {
    const note = 'ci-answers';
    const prompt = 'What is new?';
    mock.script([{ text: STORED }]);
    const first = protocolValue(await step('check', { source: source(note, { prompt }) })) as Record<
      string,
      string
    >[];
    expect(first).toHaveLength(1);
    const v1 = first[0]!;
    expect(v1.ref).toBe(sha(STORED));
    expect(v1.run).toMatch(/^\d+$/);

    // The model would now answer differently; in must fetch the stored answer and not ask it.
    mock.script([]);
    mock.setFallback({ text: 'A different answer.' });
    const calls = mock.requests.length;
    const dest = tempDir('rune-in-');
    const got = protocolValue(
      await step('in', { source: source(note, { prompt }), version: v1 }, dest),
    ) as Output;
    expect(mock.requests.length).toBe(calls);
    expect(got.version).toEqual(v1);
    expect(readFileSync(join(dest, 'response.txt'))).toEqual(Buffer.from(STORED, 'utf8'));
    const payload = JSON.parse(readFileSync(join(dest, 'payload.json'), 'utf8'));
    expect(payload).toMatchObject({
      prompt,
      response: STORED,
      ref: v1.ref,
      model: 'mock-model',
      stop_reason: 'FinalAnswer',
    });
    expect(payload.usage).toEqual({ input_tokens: 10, output_tokens: 5, total_tokens: 15 });

    // Same answer again: nothing new is stored, the given version alone comes back.
    mock.setFallback({ text: STORED });
    expect(protocolValue(await step('check', { source: source(note, { prompt }), version: v1 }))).toEqual([
      v1,
    ]);

    // out stores its run; its version is exactly what check lists afterwards.
    const src = tempDir('rune-out-');
    mock.script([{ text: 'The put answer.' }]);
    const put = await step('out', { source: source(note), params: { prompt: 'Put something.' } }, src);
    const out = protocolValue(put) as Output;
    expect(out.version).toEqual({ run: expect.stringMatching(/^\d+$/), ref: sha('The put answer.') });
    expect(put.stderr).toContain('The put answer.');
    expect(out.metadata).toContainEqual({ name: 'build_url', value: BUILD_URL });
    expect(out.metadata).toContainEqual({ name: 'answer', value: 'The put answer.' });
    expect(out.metadata).toContainEqual({ name: 'prompt', value: 'Put something.' });
    const runUrl = out.metadata.find((m) => m.name === 'run_url')?.value ?? '';
    expect(runUrl).toMatch(new RegExp(`^${notesUrl}/#/n/${note}/run-[^/]+\\.md$`));
    expect(put.stderr).toContain(runUrl);
    expect(JSON.stringify(out.version)).not.toContain('ci.example.com');

    const listed = protocolValue(await step('check', { source: source(note), version: v1 }));
    expect(listed).toEqual([v1, out.version]);
    const latest = protocolValue(await step('check', { source: source(note), version: null }));
    expect(latest).toEqual([out.version]);

    const dest2 = tempDir('rune-in-');
    const got2 = protocolValue(
      await step('in', { source: source(note), version: out.version }, dest2),
    ) as Output;
    expect(readFileSync(join(dest2, 'response.txt'), 'utf8')).toBe('The put answer.');
    // The get links the same run in the notes UI and shows its first line.
    expect(got2.metadata).toContainEqual({ name: 'run_url', value: runUrl });
    expect(got2.metadata).toContainEqual({ name: 'answer', value: 'The put answer.' });

    // The runs are ordinary files of the note: readable in the notes UI.
    const files = (await api('GET', `/api/notes/${note}/files`)).files as { name: string }[];
    expect(files.filter((file) => file.name.startsWith('run-'))).toHaveLength(2);
    mock.setFallback(undefined);
  });

  it('in fails, with nothing on stdout, when the run is gone', async () => {
    const note = 'ci-gone';
    mock.script([{ text: 'Short-lived.' }, { text: 'Kept.' }]);
    const put = async (prompt: string) => {
      const src = tempDir('rune-out-');
      const out = protocolValue(await step('out', { source: source(note), params: { prompt } }, src));
      return (out as Output).version;
    };
    const gone = await put('x');
    const kept = await put('y');
    await api('DELETE', `/api/notes/${note}/files/${gone.run}`);
    const result = await step('in', { source: source(note), version: gone }, tempDir('rune-in-'));
    expect(result.stdout).toBe('');
    expect(result.code).toBe(13);
    expect(result.stderr).toMatch(/run \d+ is gone/);
    // check given a vanished version answers with the latest one, as Concourse expects.
    expect(protocolValue(await step('check', { source: source(note), version: gone }))).toEqual([kept]);
  });

  it('a refused token is a clear error that does not show the token', async () => {
    const bad = { notes: { url: notesUrl, token: 'rune_not-a-real-token-123456', note: 'ci-answers' } };
    const result = await step('check', { source: bad });
    expect(result.stdout).toBe('');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/401.*source\.notes\.token/);
    expect(result.stderr).not.toContain('rune_not-a-real-token-123456');
  });

  it('watch: an edit through the notes API makes the next check list a new version', async () => {
    const note = 'ci-watched';
    await api('POST', '/api/notes', { name: note });
    await api('POST', `/api/notes/${note}/files`, { name: 'prompt.md', content: 'First prompt.' });
    const watch = { notes: { url: notesUrl, token, note, watch: 'prompt.md' } };

    const before = protocolValue(await step('check', { source: watch })) as Record<string, string>[];
    expect(before).toEqual([{ revision: '1' }]);
    expect(protocolValue(await step('check', { source: watch, version: before[0] }))).toEqual(before);

    await api('PUT', `/api/notes/${note}/files/prompt.md`, { content: 'Edited prompt.', base_revision: 1 });
    const after = protocolValue(await step('check', { source: watch, version: before[0] }));
    expect(after).toEqual([{ revision: '1' }, { revision: '2' }]);

    const dest = tempDir('rune-in-');
    const got = protocolValue(
      await step('in', { source: watch, version: { revision: '2' } }, dest),
    ) as Output;
    expect(got.version).toEqual({ revision: '2' });
    expect(readFileSync(join(dest, 'prompt.md'), 'utf8')).toBe('Edited prompt.');

    const put = await step('out', { source: watch, params: { prompt: 'x' } }, tempDir('rune-out-'));
    expect(put.code).toBe(2);
    expect(put.stdout).toBe('');
  });

  it('check on a note that does not exist yet lists no versions, until it does (no errored resource)', async () => {
    const note = 'ci-not-yet';
    const empty = await step('check', { source: source(note), version: null });
    expect(protocolValue(empty)).toEqual([]);
    expect(empty.stderr).toContain(`note "${note}" does not exist on ${notesUrl} yet`);
    mock.script([{ text: 'First stored answer.' }]);
    const out = protocolValue(
      await step('out', { source: source(note), params: { prompt: 'x' } }, tempDir('rune-out-')),
    ) as Output;
    expect(protocolValue(await step('check', { source: source(note), version: null }))).toEqual([
      out.version,
    ]);
  });

  it('watch: a note or a file that does not exist yet lists no versions, until it does', async () => {
    const note = 'ci-watch-later';
    const watch = { notes: { url: notesUrl, token, note, watch: 'prompt.md' } };
    const noNote = await step('check', { source: watch });
    expect(protocolValue(noNote)).toEqual([]);
    expect(noNote.stderr).toContain(`prompt.md does not exist in note "${note}" yet`);
    await api('POST', '/api/notes', { name: note });
    expect(protocolValue(await step('check', { source: watch }))).toEqual([]);
    await api('POST', `/api/notes/${note}/files`, { name: 'prompt.md', content: 'Now it exists.' });
    expect(protocolValue(await step('check', { source: watch }))).toEqual([{ revision: '1' }]);
    // in is a fetch: a revision that is not there fails the get, it never answers with nothing.
    const missing = await step('in', { source: watch, version: { revision: '9' } }, tempDir('rune-in-'));
    expect(missing.code).toBe(13);
    expect(missing.stdout).toBe('');
  });

  it('a retried put (same build, same prompt) emits the run it already stored, without a second model run', async () => {
    const note = 'ci-retried';
    const params = { prompt: 'Summarise the release.' };
    mock.script([{ text: 'Stored once.' }]);
    const first = protocolValue(
      await step('out', { source: source(note), params }, tempDir('rune-out-')),
    ) as Output;
    const calls = mock.requests.length;
    const retry = await step('out', { source: source(note), params }, tempDir('rune-out-'));
    const again = protocolValue(retry) as Output;
    expect(again.version).toEqual(first.version);
    expect(mock.requests.length).toBe(calls);
    expect(retry.stderr).toContain('this put already stored');
    expect(again.metadata).toContainEqual({ name: 'retried', value: 'true' });
    const files = (await api('GET', `/api/notes/${note}/files`)).files as { name: string }[];
    expect(files.filter((file) => file.name.startsWith('run-'))).toHaveLength(1);
    // Another build (a new BUILD_ID) is a new put: a new run.
    mock.script([{ text: 'Stored again.' }]);
    const src = tempDir('rune-out-');
    const other = await resource.step(
      'out',
      { source: source(note), params },
      { folder: src, env: { BUILD_ID: '4243' } },
    );
    expect((protocolValue(other) as Output).version).not.toEqual(first.version);
  });
});
