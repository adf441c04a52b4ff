import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentRunResult } from '../agent/types.ts';
import { registerSecret } from '../core/redact.ts';
import { findSession, formatSessionList, listSessions, saveSession } from './sessions.ts';

function result(id: string, text: string): AgentRunResult {
  return {
    answer: text,
    status: 'FinalAnswer',
    steps: 1,
    usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
    toolCalls: [],
    model: 'm',
    sessionId: id,
    messages: [
      { role: 'user', content: text },
      { role: 'assistant', content: text },
    ],
  };
}

describe('session store', () => {
  it('stores privately, redacted, adds up runs and finds sessions by last, id or prefix', () => {
    const env = { RUNE_HOME: mkdtempSync(join(tmpdir(), 'rune-sess-')) };
    registerSecret('sk-session-secret-123456789');
    const first = saveSession(env, result('aaaa1111-0000', 'key sk-session-secret-123456789'), {
      cwd: '/x',
      prompt: 'first',
    });
    saveSession(env, result('bbbb2222-0000', 'two'), { cwd: '/x', prompt: 'second' });
    const again = saveSession(env, result('aaaa1111-0000', 'three'), {
      cwd: '/x',
      prompt: 'third',
      previous: first,
    });
    expect(again).toMatchObject({ runs: 2, title: 'first', usage: { totalTokens: 6 } });
    const file = join(env.RUNE_HOME, 'sessions', 'aaaa1111-0000.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(env.RUNE_HOME, 'sessions', 'bbbb2222-0000.json'), 'utf8')).not.toContain(
      'secret',
    );
    expect(listSessions(env)).toHaveLength(2);
    expect(findSession(env, 'last', '/x').id).toBe('aaaa1111-0000');
    // The last session is this folder's: another folder's is named, not taken.
    expect(() => findSession(env, 'last', '/elsewhere')).toThrow(
      /no stored session for \/elsewhere; the last one is from \/x: `rune --resume aaaa1111`/,
    );
    expect(findSession(env, 'bbbb', '/w').id).toBe('bbbb2222-0000');
    expect(() => findSession(env, 'cccc', '/w')).toThrow(/no stored session "cccc"/);
    expect(formatSessionList(listSessions(env))).toMatch(/aaaa1111 .* FinalAnswer .* first/);
  });

  it('says so when there is nothing to resume', () => {
    const env = { RUNE_HOME: mkdtempSync(join(tmpdir(), 'rune-sess-')) };
    expect(() => findSession(env, 'last', '/w')).toThrow(/no stored session to resume/);
    expect(formatSessionList([])).toBe('no stored sessions\n');
  });

  it('names unreadable session files instead of calling the folder empty', () => {
    const env = { RUNE_HOME: mkdtempSync(join(tmpdir(), 'rune-sess-')) };
    mkdirSync(join(env.RUNE_HOME, 'sessions'));
    writeFileSync(join(env.RUNE_HOME, 'sessions', 'cafe0000-0000.json'), 'garbage{');
    expect(() => findSession(env, 'last', '/w')).toThrow(/1 session file .* could not be read/);
    expect(() => findSession(env, 'last', '/w')).not.toThrow(/is empty/);
  });
});
