// The audit log: one JSON line per policy decision in $RUNE_HOME/audit.jsonl, and the reader
// behind `rune audit`. Arguments are stored only as a sha256 digest, so no secret lands here.
import { createHash } from 'node:crypto';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeDir } from '../core/make-dir.ts';
import { runeHome } from '../core/paths.ts';
import { redact } from '../core/redact.ts';
import type { PolicyDecision, ToolCallForPolicy } from './types.ts';

export interface AuditRecord {
  time: string;
  session: string;
  tool: string;
  source: 'builtin' | 'mcp';
  server?: string;
  /** sha256 of the canonical JSON of the arguments. */
  args_sha256: string;
  decision: PolicyDecision['kind'];
  rule: string;
  mode: string;
  reason?: string;
  /** Calls made through `rune mount`: the calling process and its session id. */
  caller_pid?: number;
  caller_sid?: number;
}

export function auditFile(env: { RUNE_HOME?: string | undefined; HOME?: string | undefined }): string {
  return join(runeHome(env), 'audit.jsonl');
}

/** JSON with sorted keys, so equal arguments always give the same digest. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, inner]) => inner !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${canonicalJson(inner)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function argsDigest(args: Record<string, unknown>): string {
  return createHash('sha256').update(canonicalJson(args)).digest('hex');
}

export function auditRecord(
  call: ToolCallForPolicy,
  decision: PolicyDecision,
  context: { time: Date; session: string; mode: string },
): AuditRecord {
  return {
    time: context.time.toISOString(),
    session: context.session,
    tool: call.tool,
    source: call.source,
    ...(call.server ? { server: call.server } : {}),
    args_sha256: argsDigest(call.args),
    decision: decision.kind,
    rule: decision.rule,
    mode: context.mode,
    ...(decision.kind !== 'allow' ? { reason: redact(decision.reason) } : {}),
    ...(call.caller ? { caller_pid: call.caller.pid, caller_sid: call.caller.sid } : {}),
  };
}

export function appendAudit(file: string, record: AuditRecord): void {
  makeDir(join(file, '..'));
  // One write per record with O_APPEND: concurrent rune processes interleave whole lines.
  appendFileSync(file, `${JSON.stringify(record)}\n`, { mode: 0o600 });
}

export interface AuditQuery {
  since?: Date;
  decision?: PolicyDecision['kind'];
}

/** Records of the log that match the query, oldest first; unreadable lines are counted, not fatal. */
export function readAudit(text: string, query: AuditQuery = {}): { records: AuditRecord[]; skipped: number } {
  const records: AuditRecord[] = [];
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let record: AuditRecord;
    try {
      record = JSON.parse(line) as AuditRecord;
    } catch {
      skipped += 1;
      continue;
    }
    if (typeof record.time !== 'string' || typeof record.decision !== 'string') {
      skipped += 1;
      continue;
    }
    if (query.since && Date.parse(record.time) < query.since.getTime()) continue;
    if (query.decision && record.decision !== query.decision) continue;
    records.push(record);
  }
  return { records, skipped };
}

export function readAuditFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
}
