// The interactive session in a real terminal: rune started inside a detached tmux session (one
// tmux server per test file), driven by send-keys and read back by capture-pane.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { type MockLlm, useMockLlm } from './mock-llm.ts';
import { requireBinary, tempDir } from './rune.ts';

export const TMUX_KEY = 'sk-test-session-0a1b2c3d4e5f6a7b8c9d';
const SOCKET = `rune-agent-test-${process.pid}`;
let counter = 0;

export function tmux(...args: string[]): string {
  return execFileSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8' });
}

// A real terminal needs tmux (.ci/run installs it); without it these tests are skipped, not faked.
export const hasTmux = (() => {
  try {
    execFileSync('tmux', ['-V']);
    return true;
  } catch {
    return false;
  }
})();

export function killTmuxServer(): void {
  try {
    tmux('kill-server');
  } catch {
    // No server left.
  }
}

/**
 * The usual life cycle of a tmux test file: the binary required, one mock model for the file (reset
 * before each test, useMockLlm) and the file's tmux server killed at the end.
 */
export function useSessionSuite(): MockLlm {
  beforeAll(() => {
    requireBinary();
  });
  afterAll(killTmuxServer);
  return useMockLlm();
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits (10 s at most) until the mock has received `n` model calls, and checks that it has. */
export async function waitForRequests(mock: MockLlm, n: number): Promise<void> {
  for (let i = 0; i < 400 && mock.requests.length < n; i++) await sleep(25);
  expect(mock.requests.length).toBeGreaterThanOrEqual(n);
}

export interface Term {
  name: string;
  home: string;
  runeHome: string;
  cwd: string;
  /** The pane with its scrollback, wrapped lines as the terminal shows them. */
  capture(): string;
  /** The same with colour and attribute sequences (capture-pane -e). */
  captureEscapes(): string;
  keys(...keys: string[]): void;
  /** Types `text` literally, then Enter. */
  type(text: string): void;
  /** Sends bytes as a terminal would for a paste (bracketed when the program asked for it). */
  paste(text: string): void;
  waitFor(pattern: RegExp | string, timeoutMs?: number): Promise<string>;
}

export interface SessionOptions {
  /** Text of $RUNE_HOME/rune.toml; none when undefined. */
  toml?: string;
  /** Arguments after `--base-url URL`. */
  args?: string[];
  /** With colour the spinner turns (it is off without), as on a person's terminal. */
  colour?: boolean;
  /**
   * The first-run question about the working folder: by default the harness records it as
   * answered "no" (the folder stays read-only, as before the question existed); `ask` leaves it
   * to the test.
   */
  firstRun?: 'answered' | 'ask';
  /** The working folder (default: a fresh one). */
  cwd?: string;
  /** Further environment variables. */
  env?: Record<string, string>;
  /** An existing $HOME (its .rune is $RUNE_HOME); default: a fresh one. */
  home?: string;
  width?: number;
  height?: number;
}

export function startSession(baseUrl: string, options: SessionOptions = {}): Term {
  const home = options.home ?? tempDir('rune-tmux-home-');
  const runeHome = join(home, '.rune');
  mkdirSync(runeHome, { recursive: true, mode: 0o700 });
  if (options.toml !== undefined) writeFileSync(join(runeHome, 'rune.toml'), options.toml);
  const cwd = options.cwd ?? tempDir('rune-tmux-cwd-');
  if ((options.firstRun ?? 'answered') === 'answered') {
    const file = join(runeHome, 'folders.json');
    const answers = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
    writeFileSync(file, `${JSON.stringify({ ...answers, [cwd]: { trust: 'no' } })}\n`);
  }
  const name = `s${++counter}`;
  const command = [
    'env',
    '-i',
    `HOME=${home}`,
    `RUNE_HOME=${runeHome}`,
    'PATH=/usr/local/bin:/usr/bin:/bin',
    'TERM=xterm-256color',
    'LANG=C.UTF-8',
    options.colour ? 'COLORTERM=truecolor' : 'NO_COLOR=1',
    `RUNE_API_KEY=${TMUX_KEY}`,
    ...Object.entries(options.env ?? {}).map(([k, v]) => `${k}=${v}`),
    requireBinary(),
    '--base-url',
    baseUrl,
    ...(options.args ?? ['--model', 'm']),
  ]
    .map((part) => `'${part}'`)
    .join(' ');
  tmux(
    'new-session',
    '-d',
    '-s',
    name,
    '-x',
    String(options.width ?? 160),
    '-y',
    String(options.height ?? 50),
    '-c',
    cwd,
    `sh -c "${command}; echo EXITED=\\$?; sleep 60"`,
  );
  const term: Term = {
    name,
    home,
    runeHome,
    cwd,
    capture: () => tmux('capture-pane', '-p', '-t', name, '-S', '-5000'),
    captureEscapes: () => tmux('capture-pane', '-p', '-e', '-t', name, '-S', '-5000'),
    keys: (...keys) => {
      tmux('send-keys', '-t', name, ...keys);
    },
    type: (text) => {
      tmux('send-keys', '-t', name, '-l', text);
      tmux('send-keys', '-t', name, 'Enter');
    },
    paste: (text) => {
      tmux('set-buffer', '-b', `paste-${name}`, text);
      // -p: bracketed when the application turned bracketed paste on, as a terminal does.
      tmux('paste-buffer', '-p', '-d', '-b', `paste-${name}`, '-t', name);
    },
    async waitFor(pattern, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      let screen = '';
      while (Date.now() < deadline) {
        screen = term.capture();
        if (typeof pattern === 'string' ? screen.includes(pattern) : pattern.test(screen)) return screen;
        await sleep(50);
      }
      throw new Error(`timed out waiting for ${pattern}; screen:\n${screen}`);
    },
  };
  return term;
}
