// A real terminal for the tests of the interactive forms: a tmux server of their own (one socket
// per test file), a window per session, text typed into it and its screen waited on. Without tmux
// (.ci/run installs it) the tests that need it are skipped, not faked.
import { execFileSync } from 'node:child_process';

export const hasTmux: boolean = (() => {
  try {
    execFileSync('tmux', ['-V']);
    return true;
  } catch {
    return false;
  }
})();

export interface TmuxServer {
  /** One tmux command against this server; its output. */
  run(...args: string[]): string;
  /** Ends the server and every window in it (none started: nothing to do). */
  kill(): void;
}

export function tmuxServer(socket: string): TmuxServer {
  const run = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  return {
    run,
    kill() {
      try {
        run('kill-server');
      } catch {
        // No server left.
      }
    },
  };
}

/** A command line for `sh -c "…"`: each part in single quotes. */
export const shellWords = (parts: readonly string[]): string => parts.map((part) => `'${part}'`).join(' ');

export interface Pane {
  name: string;
  /** The screen and up to 5,000 lines of scrollback. */
  capture(): string;
  /** Keys by tmux name (C-c, Enter, Up). */
  keys(...keys: string[]): void;
  /** Text, then Enter. */
  type(text: string): void;
  waitFor(pattern: RegExp | string, timeoutMs?: number): Promise<string>;
}

/** A 160×50 window `name` in `cwd` running `sh -c "<script>"`. */
export function openPane(
  server: TmuxServer,
  name: string,
  cwd: string,
  script: string,
  timeoutMs: number,
): Pane {
  server.run('new-session', '-d', '-s', name, '-x', '160', '-y', '50', '-c', cwd, `sh -c "${script}"`);
  const pane: Pane = {
    name,
    capture: () => server.run('capture-pane', '-p', '-t', name, '-S', '-5000'),
    keys: (...keys) => {
      server.run('send-keys', '-t', name, ...keys);
    },
    type: (text) => {
      server.run('send-keys', '-t', name, '-l', text);
      server.run('send-keys', '-t', name, 'Enter');
    },
    async waitFor(pattern, wait = timeoutMs) {
      const deadline = Date.now() + wait;
      let screen = '';
      while (Date.now() < deadline) {
        screen = pane.capture();
        if (typeof pattern === 'string' ? screen.includes(pattern) : pattern.test(screen)) return screen;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`timed out waiting for ${pattern}; screen:\n${screen}`);
    },
  };
  return pane;
}
