// Every wait of a step on the network ends at its deadline, with the garbage collector running the
// whole time (Node 20 loses an `AbortSignal.any` timeout once it is collected, src/core/deadline.ts):
// a notes server that accepts the connection and never answers ends check, in and out with exit 12
// and a message naming the server, the request and source.notes.timeout_secs; a model that never
// answers ends the step at source.timeout_secs with exit 10.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GC_NODE_OPTIONS } from '../helpers/gc.ts';
import { useMockLlm } from '../helpers/mock-llm.ts';
import { tempDir } from '../helpers/rune.ts';
import { type SilentServer, startSilentServer } from '../helpers/silent-server.ts';
import { resourceDir, type Step } from './concourse-harness.ts';

const KEY = 'sk-proj-deadlineSecretKey0123456789abcd';
const TOKEN = 'rune_deadline-token-0123456789';
const resource = resourceDir();
const mock = useMockLlm();
let silent: SilentServer;

beforeAll(async () => {
  silent = await startSilentServer();
});
afterAll(() => silent?.close());

const gc = { NODE_OPTIONS: GC_NODE_OPTIONS };

function notes(extra: Record<string, unknown> = {}) {
  return { url: silent.url, token: TOKEN, note: 'ci-answers', timeout_secs: 1, ...extra };
}

describe('a notes server that accepts and never answers, under forced GC', () => {
  const cases: [Step, () => unknown, string][] = [
    ['check', () => ({ source: { notes: notes() } }), 'GET /api/notes/ci-answers'],
    [
      'check',
      () => ({ source: { notes: notes({ watch: 'prompt.md' }) } }),
      'GET /api/notes/ci-answers/files/prompt.md',
    ],
    [
      'in',
      () => ({ source: { notes: notes() }, version: { run: '7', ref: 'sha256:0' } }),
      'GET /api/notes/ci-answers/files/7',
    ],
    [
      'out',
      () => ({
        source: { api_key: KEY, base_url: mock.baseUrl, model: 'm', notes: notes() },
        params: { prompt: 'x' },
      }),
      'GET /api/notes/ci-answers',
    ],
  ];

  it.each(cases)(
    '%s ends at source.notes.timeout_secs with exit 12, naming the request',
    async (step, input, request) => {
      const before = silent.accepted;
      const result = await resource.step(step, input(), {
        env: gc,
        ...(step === 'check' ? {} : { folder: tempDir(`rune-${step}-`) }),
      });
      expect(result.stdout).toBe('');
      expect(result.code, result.stderr).toBe(12);
      expect(result.stderr).toContain(`notes server ${silent.url} did not answer ${request}`);
      expect(result.stderr).toContain('within 1 s (source.notes.timeout_secs)');
      expect(result.stderr).not.toContain(TOKEN);
      expect(silent.accepted).toBeGreaterThan(before);
      expect(mock.requests).toHaveLength(0);
    },
  );

  it('source.notes.timeout_secs is checked like every setting', async () => {
    const result = await resource.step('check', { source: { notes: notes({ timeout_secs: 0 }) } });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/source\.notes\.timeout_secs: /);
  });
});

describe('a model that accepts and never answers, under forced GC', () => {
  it('check ends at source.timeout_secs with exit 10', async () => {
    mock.setFallback({ hang: true });
    const result = await resource.step(
      'check',
      {
        source: {
          api_key: KEY,
          base_url: mock.baseUrl,
          model: 'm',
          prompt: 'Anything new?',
          timeout_secs: 1,
        },
      },
      { env: gc },
    );
    mock.setFallback(undefined);
    expect(result.stdout).toBe('');
    expect(result.code, result.stderr).toBe(10);
    expect(result.stderr).toMatch(/source\.timeout_secs/);
    expect(mock.requests.length).toBeGreaterThan(0);
  });
});
