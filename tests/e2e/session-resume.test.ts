// Sessions belong to their folder: `rune --resume` opens a picker (this folder's first), replays
// the conversation, and a session of another folder is continued only as a copy, after asking in
// the session and with a note in pipe mode; the original is never rewritten.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runRune, tempDir } from '../helpers/rune.ts';
import { hasTmux, startSession, TMUX_KEY, useSessionSuite } from '../helpers/tmux.ts';

const mock = useSessionSuite();

/** A HOME holding one stored session per folder given, stored by pipe runs; the ids in order. */
async function homeWithSessions(runs: { cwd: string; prompt: string; answer: string }[]) {
  const home = tempDir('rune-resume-home-');
  mkdirSync(join(home, '.rune'), { mode: 0o700 });
  const ids: string[] = [];
  for (const run of runs) {
    mock.script([{ text: run.answer }]);
    const result = await runRune(['--base-url', mock.baseUrl, '--model', 'm', '--json', run.prompt], {
      cwd: run.cwd,
      env: { HOME: home, RUNE_API_KEY: TMUX_KEY },
    });
    expect(result.code).toBe(0);
    ids.push(JSON.parse(result.stdout).session_id);
  }
  return { home, ids };
}

const sessionFile = (home: string, id: string) => join(home, '.rune', 'sessions', `${id}.json`);

describe.skipIf(!hasTmux)('sessions belong to their folder', () => {
  it('--resume picks from this folder first and replays the conversation', async () => {
    const here = tempDir('rune-here-');
    const elsewhere = tempDir('rune-elsewhere-');
    const { home, ids } = await homeWithSessions([
      { cwd: here, prompt: 'question from here', answer: 'the **answer** from here' },
      { cwd: elsewhere, prompt: 'question from elsewhere', answer: 'answer from elsewhere' },
    ]);
    const term = startSession(mock.baseUrl, { home, cwd: here, args: ['--model', 'm', '--resume'] });
    const screen = await term.waitFor('Resume which session?');
    // This folder's session first although the other one is newer; the other names its folder.
    expect(screen).toMatch(
      /› 1\. \d{4}-\d\d-\d\d \d\d:\d\d {2}question from here \d+ messages, 15 tokens\n {2}2\. .* {2}question from elsewhere \d+ messages, 15 tokens · in .*rune-elsewhere-/,
    );
    term.keys('Enter');
    await term.waitFor('── end of the earlier conversation ──');
    const replay = term.capture();
    expect(replay).toMatch(/› question from here\nthe answer from here\n/);
    mock.setFallback({ text: 'continued' });
    term.type('and then?');
    await term.waitFor('continued');
    const sent = mock.requests.at(-1)!.body.messages.map((m: { content: string }) => m.content);
    expect(sent).toContain('question from here');
    expect(JSON.parse(readFileSync(sessionFile(home, ids[0]!), 'utf8')).runs).toBe(2);
  });

  it('/resume inside the session opens the picker and continues the one chosen', async () => {
    const here = tempDir('rune-here-');
    const { home, ids } = await homeWithSessions([
      { cwd: here, prompt: 'an earlier question', answer: 'an earlier answer' },
    ]);
    const term = startSession(mock.baseUrl, { home, cwd: here });
    await term.waitFor('/help for commands');
    term.type('/resume');
    await term.waitFor(/Resume which session\?[\s\S]*› 1\. .* {2}an earlier question \d+ messages/);
    term.keys('Enter');
    await term.waitFor('── end of the earlier conversation ──');
    expect(term.capture()).toMatch(/› an earlier question\nan earlier answer\n/);
    mock.setFallback({ text: 'picked up again' });
    term.type('and now?');
    await term.waitFor('picked up again');
    const sent = mock.requests.at(-1)!.body.messages.map((m: { content: string }) => m.content);
    expect(sent).toEqual(expect.arrayContaining(['an earlier question', 'an earlier answer', 'and now?']));
    expect(JSON.parse(readFileSync(sessionFile(home, ids[0]!), 'utf8')).runs).toBe(2);
  });

  it("another folder's session is asked about and continued as a copy; the original stays", async () => {
    const elsewhere = tempDir('rune-elsewhere-');
    const { home, ids } = await homeWithSessions([
      { cwd: elsewhere, prompt: 'question from elsewhere', answer: 'answer from elsewhere' },
    ]);
    const original = readFileSync(sessionFile(home, ids[0]!), 'utf8');
    const here = tempDir('rune-here-');
    const term = startSession(mock.baseUrl, {
      home,
      cwd: here,
      args: ['--model', 'm', '--resume', ids[0]!.slice(0, 8)],
    });
    const screen = await term.waitFor('Continue it in');
    expect(screen).toContain(`That session belongs to ${elsewhere}.`);
    expect(screen).toMatch(
      /› 1\. Yes, as a copy here \(the original stays with .*rune-elsewhere-.*\)\n {2}2\. No/,
    );
    term.keys('Enter');
    await term.waitFor('── end of the earlier conversation ──');
    mock.setFallback({ text: 'continued here' });
    term.type('go on');
    await term.waitFor('continued here');
    term.type('/exit');
    await term.waitFor('EXITED=0');
    // The original is untouched; the copy is a new session of this folder.
    expect(readFileSync(sessionFile(home, ids[0]!), 'utf8')).toBe(original);
    const list = await runRune(['sessions', '--json'], { env: { HOME: home } });
    const rows = JSON.parse(list.stdout) as { id: string; cwd: string; title: string }[];
    expect(rows).toHaveLength(2);
    expect(rows.find((row) => row.id !== ids[0])).toMatchObject({
      cwd: here,
      title: 'question from elsewhere',
    });
  });

  it("pipe mode: --resume takes this folder's last only; another folder's by id continues as a copy, said on stderr", async () => {
    const elsewhere = tempDir('rune-elsewhere-');
    const { home, ids } = await homeWithSessions([
      { cwd: elsewhere, prompt: 'question from elsewhere', answer: 'answer from elsewhere' },
    ]);
    const original = readFileSync(sessionFile(home, ids[0]!), 'utf8');
    const here = tempDir('rune-here-');
    const env = { HOME: home, RUNE_API_KEY: TMUX_KEY };
    const last = await runRune(['--base-url', mock.baseUrl, '--model', 'm', '--resume', 'next question'], {
      cwd: here,
      env,
    });
    expect(last.code).toBe(13);
    expect(last.stderr).toContain(
      `there is no stored session for ${here}; the last one is from ${elsewhere}`,
    );
    mock.script([{ text: 'copied on' }]);
    const byId = await runRune(
      ['--base-url', mock.baseUrl, '--model', 'm', '--resume', ids[0]!, 'next question'],
      { cwd: here, env },
    );
    expect(byId.code).toBe(0);
    expect(byId.stdout).toBe('copied on\n');
    expect(byId.stderr).toContain(
      `belongs to ${elsewhere}; continuing a copy of it in ${here} (the original stays)`,
    );
    expect(readFileSync(sessionFile(home, ids[0]!), 'utf8')).toBe(original);
  });
});
