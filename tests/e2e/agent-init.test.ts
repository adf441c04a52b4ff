// `rune init`: the non-interactive form from flags, the interactive form in a real terminal (tmux),
// refusing to overwrite, and a written file that the config loader accepts.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanEnv, requireBinary, runRune, tempDir } from '../helpers/rune.ts';

const SOCKET = `rune-agent-init-${process.pid}`;
const tmux = (...args: string[]) => execFileSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8' });
// The terminal tests need tmux (.ci/run installs it); without it they are skipped, not faked.
const hasTmux = (() => {
  try {
    execFileSync('tmux', ['-V']);
    return true;
  } catch {
    return false;
  }
})();

afterAll(() => {
  try {
    tmux('kill-server');
  } catch {
    // None started.
  }
});

function home() {
  const dir = tempDir('rune-init-');
  const runeHome = join(dir, '.rune');
  return { dir, runeHome, env: { ...cleanEnv(dir), RUNE_HOME: runeHome } };
}

describe('rune init', () => {
  it('writes a commented rune.toml from flags, private, and the loader accepts it', async () => {
    const h = home();
    const result = await runRune(
      [
        'init',
        '--yes',
        '--model',
        'gpt-test',
        '--base-url',
        'http://127.0.0.1:9/v1',
        '--allow-command',
        'ls',
        '--allow-command',
        'git status',
      ],
      { env: h.env },
    );
    expect(result.code).toBe(0);
    const file = join(h.runeHome, 'rune.toml');
    const text = readFileSync(file, 'utf8');
    expect(text).toMatch(/^model = "gpt-test"$/m);
    expect(text).toMatch(/^base_url = "http:\/\/127\.0\.0\.1:9\/v1"$/m);
    expect(text).toMatch(/^allowed_commands = \["ls", "git status"\]$/m);
    expect(text).toMatch(/^# max_steps = 25/m);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const doctor = await runRune(['doctor', '--json'], { env: h.env });
    expect(JSON.parse(doctor.stdout).config).toMatchObject({ found: true, valid: true });
  });

  it('refuses to replace an existing file without --force', async () => {
    const h = home();
    expect((await runRune(['init', '--yes'], { env: h.env })).code).toBe(0);
    const again = await runRune(['init', '--yes', '--model', 'other'], { env: h.env });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already exists; pass --force/);
    expect((await runRune(['init', '--yes', '--force', '--model', 'other'], { env: h.env })).code).toBe(0);
    expect(readFileSync(join(h.runeHome, 'rune.toml'), 'utf8')).toMatch(/^model = "other"$/m);
  });

  it('rejects a bad provider with a usage error', async () => {
    const h = home();
    const result = await runRune(['init', '--yes', '--provider', 'nosuch'], { env: h.env });
    expect(result.code).toBe(2);
    expect(existsSync(join(h.runeHome, 'rune.toml'))).toBe(false);
  });

  it.skipIf(!hasTmux)('asks its questions in a terminal', async () => {
    const h = home();
    const command = [
      'env',
      '-i',
      `HOME=${h.dir}`,
      `RUNE_HOME=${h.runeHome}`,
      'PATH=/usr/bin:/bin',
      'TERM=xterm',
      requireBinary(),
      'init',
    ]
      .map((p) => `'${p}'`)
      .join(' ');
    tmux(
      'new-session',
      '-d',
      '-s',
      'init',
      '-x',
      '160',
      '-y',
      '40',
      `sh -c "${command}; echo EXITED=\\$?; sleep 30"`,
    );
    const waitFor = async (text: string): Promise<void> => {
      for (let i = 0; i < 300; i++) {
        if (tmux('capture-pane', '-p', '-t', 'init').includes(text)) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`no "${text}" on screen:\n${tmux('capture-pane', '-p', '-t', 'init')}`);
    };
    const answer = async (question: string, text: string): Promise<void> => {
      await waitFor(question);
      tmux('send-keys', '-t', 'init', '-l', text);
      tmux('send-keys', '-t', 'init', 'Enter');
    };
    await answer('Provider', 'bogus');
    await waitFor('is not one of');
    tmux('send-keys', '-t', 'init', '-l', 'gemini');
    tmux('send-keys', '-t', 'init', 'Enter');
    await answer('Model', 'gemini-test');
    // A bad base URL or domain is asked again at once, not reported after the last question.
    await answer('Base URL', 'localhost:11434/v1');
    await answer('must be an http:// or https:// URL', '');
    await answer('API key (empty', 'sk-typed-in-init-0123456789abcdef');
    await answer('Policy mode', 'confirm');
    await answer('Commands allowed', 'ls, pwd');
    await answer('Domains fetch_url', 'https://docs.example.com/, *');
    await answer('is not a host name', 'docs.example.com');
    await waitFor('EXITED=0');
    const text = readFileSync(join(h.runeHome, 'rune.toml'), 'utf8');
    expect(text).toMatch(/^provider = "gemini"$/m);
    expect(text).toMatch(/^model = "gemini-test"$/m);
    expect(text).toMatch(/^mode = "confirm"$/m);
    expect(text).toMatch(/^allowed_commands = \["ls", "pwd"\]$/m);
    expect(text).toMatch(/^allowed_domains = \["docs\.example\.com"\]$/m);
    expect(text).toMatch(/^api_key = "sk-typed-in-init-0123456789abcdef"$/m);
    // The key was not echoed while typed.
    expect(tmux('capture-pane', '-p', '-t', 'init')).not.toContain('sk-typed-in-init');
    tmux('kill-session', '-t', 'init');
  });

  it.skipIf(!hasTmux)('Ctrl-C during the questions exits 130 and writes nothing', async () => {
    const h = home();
    const command = ['env', '-i', `HOME=${h.dir}`, `RUNE_HOME=${h.runeHome}`, 'PATH=/usr/bin:/bin']
      .concat(['TERM=xterm', requireBinary(), 'init'])
      .map((p) => `'${p}'`)
      .join(' ');
    tmux(
      'new-session',
      '-d',
      '-s',
      'init2',
      '-x',
      '160',
      '-y',
      '40',
      `sh -c "${command}; echo EXITED=\\$?; sleep 30"`,
    );
    const screen = async (text: string): Promise<string> => {
      for (let i = 0; i < 300; i++) {
        const shown = tmux('capture-pane', '-p', '-t', 'init2');
        if (shown.includes(text)) return shown;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`no "${text}" on screen:\n${tmux('capture-pane', '-p', '-t', 'init2')}`);
    };
    await screen('Provider');
    tmux('send-keys', '-t', 'init2', 'C-c');
    expect(await screen('EXITED=')).toContain('EXITED=130');
    expect(existsSync(join(h.runeHome, 'rune.toml'))).toBe(false);
    tmux('kill-session', '-t', 'init2');
  });
});
