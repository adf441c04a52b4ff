import { describe, expect, it } from 'vitest';
import { registerSecret } from '../core/redact.ts';
import type { SandboxResult } from '../sandbox/types.ts';
import { type CallTrace, formatTrace } from './log.ts';

const base: CallTrace = {
  tool: 'execute_cmd',
  path: 'tools/execute_cmd',
  caller: { pid: 41, sid: 40 },
  started: new Date('2026-01-02T03:04:05Z'),
  durationMs: 12,
  status: 'ok',
  processes: [],
};

const run: SandboxResult = {
  exitCode: 3,
  signal: null,
  stdout: '',
  stderr: 'oops sk-log-secret-123456\nline two\n',
  stdoutDropped: 0,
  stderrDropped: 0,
  timedOut: false,
  cancelled: false,
  durationMs: 7.4,
  layers: [
    { layer: 'landlock', applied: true, detail: 'ABI 7' },
    { layer: 'cgroups', applied: false, detail: 'no delegation' },
  ],
};

describe('the .log of a call', () => {
  it('names the decision, each process’s layers, its exit status and stderr (redacted)', () => {
    registerSecret('sk-log-secret-123456');
    const text = formatTrace({
      ...base,
      status: 'error',
      decision: { kind: 'allow', rule: 'allowed_commands' },
      processes: [run],
    });
    expect(text).toBe(
      [
        'call: tools/execute_cmd (tool execute_cmd)',
        'caller: pid 41, session 40',
        'started: 2026-01-02T03:04:05.000Z',
        'status: error',
        'decision: allow (rule allowed_commands)',
        'duration: 12 ms',
        'process 1: exit status 3, 7 ms',
        '  layers:',
        '    landlock  applied  ABI 7',
        '    cgroups   SKIPPED  no delegation',
        '  stderr:',
        '    oops [REDACTED]',
        '    line two',
        '',
      ].join('\n'),
    );
  });

  it('gives a refusal its reason, and a call refused before the policy its rule', () => {
    expect(
      formatTrace({
        ...base,
        status: 'refused',
        decision: { kind: 'deny', rule: 'floor', reason: '~/.ssh is protected' },
      }),
    ).toContain('decision: deny (rule floor): ~/.ssh is protected\nduration: 12 ms\nprocesses: none\n');
    expect(formatTrace({ ...base, status: 'invalid input', rule: 'invalid_arguments' })).toContain(
      'decision: none (refused before the policy: invalid_arguments)',
    );
  });

  it('an MCP call names its server and the layers the server runs under', () => {
    const text = formatTrace({
      ...base,
      decision: { kind: 'allow', rule: 'mcp.read-only' },
      server: { name: 'everything', layers: run.layers },
    });
    expect(text).toContain(
      'MCP server everything runs in the sandbox with these layers:\n  landlock  applied  ABI 7\n',
    );
  });
});
