// The interactive session's files and its logger: the prompt history file, and a logger whose
// lines go out beside the live pane (erased first, drawn again after) instead of through it.

import { appendFileSync, chmodSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { LogEvent, Logger } from '../core/logger.ts';
import { makeDir } from '../core/make-dir.ts';
import { runeHome } from '../core/paths.ts';
import { redact } from '../core/redact.ts';

export function historyFile(env: NodeJS.ProcessEnv): string {
  return join(runeHome(env), 'history');
}

/** History lines, oldest first (a multi-line prompt was stored with its newlines as `\n`). */
export function loadHistory(file: string): string[] {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .slice(-1000)
      .map((line) => line.replace(/\\n/g, '\n'));
  } catch {
    return [];
  }
}

/** A line is kept in the history file only when nothing in it looks like a secret. */
export function appendHistory(file: string, line: string): void {
  if (!line.trim() || redact(line) !== line || line.startsWith(' ')) return;
  try {
    makeDir(dirname(file));
    appendFileSync(file, `${line.trim().replace(/\n/g, '\\n')}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
  } catch {
    // History is a convenience; a read-only home must not stop the session.
  }
}

/**
 * The same logger, each line written through `aside`: a warning printed (on stderr) while the
 * live pane is drawn (on stdout) would otherwise land in the middle of it.
 */
export function asideLogger(logger: Logger, aside: (write: () => void) => void): Logger {
  const wrap =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (event: LogEvent, fields?: Record<string, unknown>): void => {
      aside(() => logger[level](event, fields));
    };
  return {
    verbose: logger.verbose,
    debug: wrap('debug'),
    info: wrap('info'),
    warn: wrap('warn'),
    error: wrap('error'),
  };
}
