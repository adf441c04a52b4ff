// The interactive session's prompt in a real terminal (tmux): pastes, the slash menu with Tab,
// @file mentions attached under the policy, Ctrl-R, !commands, /allow after a refusal, the mode
// switch on the prompt line, the status row and the per-turn line, /model and /status.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/rune.ts';
import { hasTmux, sleep, startSession, useSessionSuite, waitForRequests } from '../helpers/tmux.ts';

const mock = useSessionSuite();

/** The text of the last user message the model was sent. */
const lastPrompt = (): string => mock.requests.at(-1)!.body.messages.at(-1).content;

/** Exactly `n` model calls received. */
async function requests(n: number): Promise<void> {
  await waitForRequests(mock, n);
  expect(mock.requests).toHaveLength(n);
}

describe.skipIf(!hasTmux)('the session prompt (tmux)', () => {
  it('a paste is one prompt: a short one as typed, a long one folded and sent whole', async () => {
    const term = startSession(mock.baseUrl);
    await term.waitFor('/help for commands');
    mock.setFallback({ text: 'got it' });
    term.paste('first line of the paste\nsecond line of the paste');
    await term.waitFor('› first line of the paste');
    // Nothing was sent by the paste's newline.
    await sleep(300);
    expect(mock.requests).toHaveLength(0);
    term.keys('Enter');
    await requests(1);
    expect(lastPrompt()).toBe('first line of the paste\nsecond line of the paste');
    const long = Array.from({ length: 30 }, (_, i) => `row ${i}`).join('\n');
    term.paste(long);
    await term.waitFor('[paste #1: 30 lines]');
    term.keys('-l', ' count them');
    term.keys('Enter');
    await requests(2);
    expect(lastPrompt()).toBe(`${long} count them`);
    // The transcript shows the long prompt folded.
    await term.waitFor(/› row 0\n {2}row 1\n {2}row 2\n {2}row 3\n {2}… 26 more lines/);
  });

  it('a prompt typed while an answer streams, or right after /clear, waits its turn and is sent', async () => {
    const term = startSession(mock.baseUrl);
    await term.waitFor('/help for commands');
    mock.script([{ text: 'the slow answer', delay: 1500 }, { text: 'answer two' }, { text: 'answer three' }]);
    term.type('first');
    await requests(1);
    term.type('typed meanwhile');
    await term.waitFor('↳ queued: typed meanwhile');
    await requests(2);
    expect(lastPrompt()).toBe('typed meanwhile');
    await term.waitFor('answer two');
    // A prompt sent at once after /clear, before the screen is redrawn, is not lost.
    term.type('/clear');
    term.type('after the clear');
    await requests(3);
    expect(lastPrompt()).toBe('after the clear');
    await term.waitFor('answer three');
  });

  it('the slash menu lists commands with what they do; Tab completes; Ctrl-R finds an earlier prompt', async () => {
    const term = startSession(mock.baseUrl);
    await term.waitFor('/help for commands');
    term.keys('-l', '/st');
    await term.waitFor(/› \/status +the session's tokens, context left and cost/);
    term.keys('Tab');
    await term.waitFor(/allowlist › \/status\s*$/m);
    term.keys('Enter');
    await term.waitFor(/^tokens: {4}0 \(input 0, output 0\)$/m);
    mock.setFallback({ text: 'an answer' });
    term.type('remember the milk');
    await requests(1);
    term.type('something else');
    await requests(2);
    term.keys('C-r');
    term.keys('-l', 'milk');
    await term.waitFor('history search: milk  remember the milk');
    term.keys('Enter');
    await requests(3);
    expect(lastPrompt()).toBe('remember the milk');
  });

  it('@file attaches a file the policy lets it read, and refuses one it does not, saying how to allow it', async () => {
    const term = startSession(mock.baseUrl);
    await term.waitFor('/help for commands');
    writeFileSync(join(term.cwd, 'notes.txt'), 'the notes say 42\n');
    const outside = join(tempDir('rune-outside-'), 'secret-plan.txt');
    writeFileSync(outside, 'outside the readable paths\n');
    mock.setFallback({ text: 'read them' });
    term.keys('-l', 'summarise @no');
    await term.waitFor(/› @notes\.txt/);
    term.keys('Tab');
    await term.waitFor(/allowlist › summarise @notes\.txt\s*$/m);
    term.keys('Enter');
    await requests(1);
    expect(lastPrompt()).toMatch(
      /^summarise @notes\.txt\n\n<file path="notes\.txt">\n[\s\S]*the notes say 42[\s\S]*<\/file>$/,
    );
    await term.waitFor(/> read_file path="notes\.txt" \| allowed/);
    term.type(`and @${outside}`);
    await requests(2);
    expect(lastPrompt()).toBe(`and @${outside}`);
    const screen = await term.waitFor('to allow it: /allow');
    expect(screen).toMatch(
      /> read_file path=".*secret-plan\.txt" \| blocked \(path\.not-allowed\)\n {2}.*secret-plan\.txt is outside the readable paths/,
    );
  });

  it('!cmd runs under the policy: refused, allowed with /allow (shown, then saved), then its output goes with the next prompt', async () => {
    const term = startSession(mock.baseUrl, {
      toml: '# my settings\n[policy]\nallowed_commands = ["ls"] # kept\n',
    });
    await term.waitFor('/help for commands');
    term.type('!printf hello-from-bang');
    let screen = await term.waitFor('to allow it: /allow');
    expect(screen).toMatch(
      /'printf' is not in allowed_commands \(add 'printf' to \[policy\] allowed_commands to allow it\)/,
    );
    term.type('/allow');
    screen = await term.waitFor('Allow it from now on?');
    expect(screen).toMatch(
      /› 1\. Save 'printf' in allowed_commands \(.*rune\.toml, comments kept\)\n {2}2\. Allow 'printf' \(allowed_commands\) for this session only\n {2}3\. No/,
    );
    term.keys('Enter');
    await term.waitFor("added 'printf' to allowed_commands in");
    expect(readFileSync(join(term.runeHome, 'rune.toml'), 'utf8')).toBe(
      '# my settings\n[policy]\nallowed_commands = ["ls", "printf"] # kept\n',
    );
    term.type('!printf hello-from-bang');
    await term.waitFor(
      /execute_cmd cmd="printf hello-from-bang" \| allowed \(allowed_commands\)[\s\S]*hello-from-bang/,
    );
    await term.waitFor('(its output goes to the model with your next prompt)');
    expect(mock.requests).toHaveLength(0);
    mock.setFallback({ text: 'seen it' });
    term.type('what did it print?');
    await requests(1);
    expect(lastPrompt()).toMatch(
      /^I ran `printf hello-from-bang` in the sandbox:\nexit code: 0\nstdout:\nhello-from-bang[\s\S]*\n\nwhat did it print\?$/,
    );
  });

  it('Shift+Tab and /mode change the policy mode, shown on the prompt line', async () => {
    const term = startSession(mock.baseUrl);
    await term.waitFor(/^allowlist ›\s*$/m);
    term.keys('BTab');
    await term.waitFor('policy mode: confirm (what the lists do not cover is asked about)');
    await term.waitFor(/^confirm ›\s*$/m);
    mock.script([
      { toolCalls: [{ name: 'write_file', arguments: { path: 'x.txt', content: 'x' } }] },
      { text: 'ok' },
    ]);
    term.type('write x');
    await term.waitFor('1. Yes, once');
    // Esc says no (the model is told and answers).
    term.keys('Escape');
    await term.waitFor(/blocked \(confirm\.no\)[\s\S]*ok/);
    term.type('/mode allowlist');
    await term.waitFor(/^allowlist ›\s*$/m);
    term.type('/mode sideways');
    await term.waitFor('unknown mode "sideways": one of allowlist, confirm, unrestricted');
  });

  it('the status row shows time and tokens while a turn runs; each turn ends with its tokens and the context left', async () => {
    const term = startSession(mock.baseUrl, {
      toml: 'context_window = 1000\ninput_price = 2\noutput_price = 10\n',
    });
    await term.waitFor('/help for commands');
    mock.script([
      {
        toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }],
        usage: { input: 300, output: 20 },
        delay: 400,
      },
      { text: 'done listing', usage: { input: 400, output: 50 }, delay: 1500 },
    ]);
    term.type('list the folder');
    await term.waitFor(/thinking · \d+(\.\d)?s · ↑ 300 ↓ 20 tokens · esc to interrupt/);
    await term.waitFor(/─ 2 model calls · 770 tokens \(↑ 700 ↓ 70\) · context 450\/1\.0k \(55% left\) · \d/);
    term.type('/status');
    const screen = await term.waitFor(/^cost: .*/m);
    expect(screen).toMatch(/^tokens: {4}770 \(input 700, output 70\)$/m);
    expect(screen).toMatch(/^cost: {6}0\.0021 \(at 2 \/ 10 per million input \/ output tokens\)$/m);
    mock.setFallback({ text: 'from the other model' });
    term.type('/model other-model');
    await term.waitFor('model: other-model for the rest of this session');
    term.type('hello');
    await term.waitFor('from the other model');
    expect(mock.requests.at(-1)!.body.model).toBe('other-model');
  });
});
