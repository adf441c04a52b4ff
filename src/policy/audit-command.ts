// `rune audit`: shows the decisions of the audit log, filtered by time and decision.
import { RuneError } from '../core/errors.ts';
import { terminalLine } from '../core/terminal-text.ts';
import { type AuditRecord, auditFile, readAudit, readAuditFile } from './audit.ts';

export interface AuditCommandOptions {
  since?: string;
  decision?: string;
  json?: boolean;
}

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `30m`, `2h`, `7d`, `1w` before now, or an ISO date/time. */
export function parseSince(text: string, now: Date): Date {
  const relative = /^(\d+)\s*([smhdw])$/.exec(text.trim());
  if (relative) return new Date(now.getTime() - Number(relative[1]) * UNITS[relative[2]!]!);
  const time = Date.parse(text);
  if (Number.isNaN(time)) {
    throw new RuneError(
      'USAGE',
      `--since: "${text}" is neither a duration (30m, 2h, 7d, 1w) nor a date (2026-01-31)`,
    );
  }
  return new Date(time);
}

export function formatAuditLine(record: AuditRecord): string {
  // A reason quotes what the model asked for: shown on a terminal, never obeyed by it.
  const tool = terminalLine(record.server ? `${record.server}.${record.tool}` : record.tool);
  const reason = record.reason ? `  ${terminalLine(record.reason)}` : '';
  const caller =
    record.caller_pid === undefined ? '' : ` (pid ${record.caller_pid}, sid ${record.caller_sid})`;
  return `${record.time}  ${record.decision.padEnd(5)}  ${tool.padEnd(16)}  ${record.rule.padEnd(20)}  ${record.mode}  ${record.session}${caller}${reason}`;
}

/** Writes the matching records to `write`; returns the exit code. */
export function auditCommand(
  options: AuditCommandOptions,
  env: NodeJS.ProcessEnv,
  write: (text: string) => void,
  now: Date = new Date(),
): number {
  if (options.decision !== undefined && !['allow', 'deny', 'ask'].includes(options.decision)) {
    throw new RuneError('USAGE', `--decision: expected allow or deny, not "${options.decision}"`);
  }
  const file = auditFile(env);
  let text: string;
  try {
    text = readAuditFile(file);
  } catch (cause) {
    throw new RuneError('IO', `cannot read the audit log ${file}`, { cause });
  }
  const { records, skipped } = readAudit(text, {
    ...(options.since ? { since: parseSince(options.since, now) } : {}),
    ...(options.decision ? { decision: options.decision as AuditRecord['decision'] } : {}),
  });
  if (options.json) {
    write(`${JSON.stringify(records, null, 2)}\n`);
  } else if (records.length === 0) {
    write(text === '' ? `no decisions logged yet (${file})\n` : 'no decisions match\n');
  } else {
    write(`${records.map(formatAuditLine).join('\n')}\n`);
  }
  if (skipped > 0) process.stderr.write(`warning: ${skipped} unreadable line(s) in ${file} skipped\n`);
  return 0;
}
