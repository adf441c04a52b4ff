// Diagnostics go to stderr only; stdout belongs to answers and protocol JSON. With --verbose every
// line is one NDJSON object {time, level, event, ...fields}; otherwise warnings and errors are short
// human lines. Everything passes through the secret redactor.
import { redact, redactValue } from './redact.ts';
import { terminalText } from './terminal-text.ts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** The folders of src/ that log. An event is named `area.what` (`sandbox.layer_missing`), so a
 * --verbose line says where it came from; the type makes an unprefixed name a compile error. */
export type LogArea =
  | 'agent'
  | 'cli'
  | 'concourse'
  | 'config'
  | 'mcp'
  | 'mount'
  | 'notes'
  | 'policy'
  | 'provider'
  | 'sandbox'
  | 'skills'
  | 'tools';
export type LogEvent = `${LogArea}.${string}`;
const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(event: LogEvent, fields?: Record<string, unknown>): void;
  info(event: LogEvent, fields?: Record<string, unknown>): void;
  warn(event: LogEvent, fields?: Record<string, unknown>): void;
  error(event: LogEvent, fields?: Record<string, unknown>): void;
  readonly verbose: boolean;
}

export interface LoggerOptions {
  /** NDJSON lines for every level at or above `level`. */
  verbose?: boolean;
  level?: LogLevel;
  write?: (line: string) => void;
  now?: () => Date;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const verbose = options.verbose ?? false;
  const threshold = RANK[options.level ?? (verbose ? 'debug' : 'warn')];
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const now = options.now ?? (() => new Date());

  const log = (level: LogLevel, event: LogEvent, fields: Record<string, unknown> = {}): void => {
    if (RANK[level] < threshold) return;
    if (verbose) {
      const record = { time: now().toISOString(), level, event, ...(redactValue(fields) as object) };
      write(`${JSON.stringify(record)}\n`);
      return;
    }
    const message = typeof fields.message === 'string' ? fields.message : event;
    const prefix = level === 'error' ? 'error: ' : level === 'warn' ? 'warning: ' : '';
    // A message can carry a tool's or a server's text: no escape sequence of theirs reaches stderr.
    write(`${terminalText(redact(prefix + message))}\n`);
  };

  return {
    verbose,
    debug: (event, fields) => log('debug', event, fields),
    info: (event, fields) => log('info', event, fields),
    warn: (event, fields) => log('warn', event, fields),
    error: (event, fields) => log('error', event, fields),
  };
}

/** A logger that drops everything, for code paths and tests that need one. */
export const silentLogger: Logger = createLogger({ write: () => {} });
