// The questions of a chat run, asked and answered on a real store, without a model: the run is a
// plain object that waits the way a running chat run does.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApprovalAnswer, ApprovalRequest } from '../policy/types.ts';
import { type ApprovalOptions, Approvals, type AskingRun } from './approvals.ts';
import { type Kit, makeServer } from './test-kit.ts';

let kit: Kit;
afterEach(async () => {
  await kit?.server.close();
});

const question: ApprovalRequest = {
  kind: 'ask',
  question: 'Read /outside/data.txt?',
  reason: 'outside the allowed paths',
  rule: 'paths',
  suggestion: { list: 'allowed_files_ro', value: '/outside/data.txt' },
  preview: 'the preview',
  grants: [{ list: 'allowed_files_ro', value: '/outside/data.txt' }],
  scopes: ['once', 'session', 'always'],
};
const call = { tool: 'read_file', args: { path: '/outside/data.txt' }, source: 'builtin' as const };

async function setup(extra: Partial<ApprovalOptions> = {}) {
  kit = await makeServer();
  const home = mkdtempSync(join(tmpdir(), 'rune-home-'));
  const note = kit.server.store.createNote('lab', false);
  const run: AskingRun = {
    noteId: note.id,
    runId: 'r_1',
    controller: new AbortController(),
    waiting: new Map(),
  };
  const approvals = new Approvals({
    store: kit.server.store,
    hub: kit.server.hub,
    env: { HOME: home },
    runOf: (noteId) => (noteId === note.id ? run : undefined),
    ...extra,
  });
  return { approvals, run, note, config: join(home, '.rune', 'rune.toml') };
}

describe('Approvals', () => {
  it('stores a question as a pending approval and lets the run go on with the answer', async () => {
    const { approvals, run, note } = await setup();
    const answer = approvals.confirmer(run).confirm(call, question);
    const [row] = approvals.pending(note.id);
    expect(row).toMatchObject({
      run_id: 'r_1',
      tool: 'read_file',
      arguments: JSON.stringify(call.args),
      question: 'Read /outside/data.txt?\nthe preview',
      status: 'pending',
      grants: JSON.stringify(question.grants),
    });
    expect(approvals.pending()).toHaveLength(1);
    expect(approvals.answer(row!.id, 'yes', 'ada')).toMatchObject({ status: 'yes', answered_by: 'ada' });
    expect(await answer).toEqual({ kind: 'allow', scope: 'once' });
    expect(run.waiting.size).toBe(0);
    expect(approvals.answer(row!.id, 'no', 'ada')).toBeNull(); // answered already
  });

  it('stores an "always" answer in rune.toml before acknowledging it; a failure leaves the question open', async () => {
    const { approvals, run, note, config } = await setup();
    const answer = approvals.confirmer(run).confirm(call, question);
    const [row] = approvals.pending(note.id);
    // A rune.toml rune cannot edit safely: the answer is refused and the question stays open.
    mkdirSync(join(config, '..'), { recursive: true });
    writeFileSync(config, 'policy.mode = "confirm"\n');
    expect(() => approvals.answer(row!.id, 'always', 'ada')).toThrow(
      /could not add .* answer yes to allow this call once/,
    );
    expect(approvals.pending(note.id)).toHaveLength(1);
    writeFileSync(config, '');
    expect(approvals.answer(row!.id, 'always', 'ada')).toMatchObject({ status: 'always' });
    // On disk when the answer returns, before the run hears it.
    expect(readFileSync(config, 'utf8')).toContain(JSON.stringify('/outside/data.txt'));
    expect(await answer).toEqual({ kind: 'allow', scope: 'always' });
  });

  it('takes only the answers the question offers, and passes what a refusal advises to the run', async () => {
    const { approvals, run, note } = await setup();
    const once = { ...question, scopes: ['once', 'session'] as const };
    const answer = approvals.confirmer(run).confirm(call, once);
    const [row] = approvals.pending(note.id);
    expect(() => approvals.answer(row!.id, 'always', 'ada')).toThrow(/cannot be allowed for good/);
    expect(approvals.answer(row!.id, 'no', 'ada', 'read data.txt from the workspace')).toMatchObject({
      status: 'no',
      instead: 'read data.txt from the workspace',
    });
    expect(await answer).toEqual({ kind: 'deny', instead: 'read data.txt from the workspace' });
  });

  // Ways a question ends without an admin's answer: each is a no, stored as expired.
  it.each<[string, (a: Approvals, run: AskingRun) => void, Partial<ApprovalOptions>]>([
    ['the run was cancelled before it asked', (_a, run) => run.controller.abort(), {}],
    ['the run ended', (a) => setTimeout(() => a.expire('r_1'), 1), {}],
    ['nobody answered in time', () => {}, { timeoutMs: 5 }],
  ])('%s', async (_name, before, extra) => {
    const { approvals, run, note } = await setup(extra);
    before(approvals, run);
    const answer = (await approvals.confirmer(run).confirm(call, question)) as ApprovalAnswer;
    expect(answer).toEqual({ kind: 'deny' });
    expect(approvals.pending(note.id)).toEqual([]);
    expect(
      approvals.approval(kit.server.store.db.prepare('select id from approvals').pluck().get() as string),
    ).toMatchObject({ status: 'expired', answered_by: null });
  });
});
