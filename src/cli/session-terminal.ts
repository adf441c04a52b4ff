// The interactive session's terminal pieces: the spinner, a logger that clears its line, the
// prompt history file, and the readline interface that reads the prompts.

import { appendFileSync, chmodSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import type { LogEvent, Logger } from '../core/logger.ts';
import { runeHome } from '../core/paths.ts';
import { redact } from '../core/redact.ts';
import { paint, type Style } from './format.ts';

export interface SessionIo {
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
}

export function historyFile(env: NodeJS.ProcessEnv): string {
  return join(runeHome(env), 'history');
}

/** History lines, newest first (readline's order). */
function loadHistory(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).reverse().slice(0, 1000);
  } catch {
    return [];
  }
}

/** A line is kept in the history file only when nothing in it looks like a secret. */
export function appendHistory(file: string, line: string): void {
  if (!line.trim() || redact(line) !== line || line.startsWith(' ')) return;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    appendFileSync(file, `${line.replace(/\n/g, ' ')}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
  } catch {
    // History is a convenience; a read-only home must not stop the session.
  }
}

/** The prompt reader, with the history file's lines to scroll through. */
export function openPrompt(io: SessionIo, style: Style, history: string): Interface {
  return createInterface({
    input: io.input,
    output: io.output,
    terminal: Boolean(io.input.isTTY && io.output.isTTY),
    history: loadHistory(history),
    historySize: 1000,
    removeHistoryDuplicates: true,
    prompt: paint(style, 'cyan', '> '),
  });
}

export class Spinner {
  #timer: NodeJS.Timeout | undefined;
  #frame = 0;
  constructor(
    private readonly write: (text: string) => void,
    private readonly enabled: boolean,
  ) {}
  start(label: string): void {
    this.stop();
    if (!this.enabled) return;
    const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
    const draw = (): void => {
      this.write(`\r\x1b[2m${frames[this.#frame++ % frames.length]} ${label}\x1b[22m\x1b[K`);
    };
    draw();
    this.#timer = setInterval(draw, 80);
  }
  stop(): void {
    if (this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.write('\r\x1b[K');
  }
  /** Wipes the spinner's line and keeps it turning: its next frame is drawn below what came meanwhile. */
  clear(): void {
    if (this.#timer !== undefined) this.write('\r\x1b[K');
  }
}

/**
 * The same logger, clearing the terminal line first: a warning printed (on stderr) while the
 * spinner turns (on stdout) would otherwise start in the middle of its line.
 */
export function clearingLogger(logger: Logger, clear: () => void): Logger {
  const wrap =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (event: LogEvent, fields?: Record<string, unknown>): void => {
      clear();
      logger[level](event, fields);
    };
  return {
    verbose: logger.verbose,
    debug: wrap('debug'),
    info: wrap('info'),
    warn: wrap('warn'),
    error: wrap('error'),
  };
}
