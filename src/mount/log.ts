// The `.log` companion of an endpoint: what the last call of a session did — the policy's decision,
// the sandbox layers of every process it started, how long it took, how it ended, its stderr.
// Pure text from plain values; everything passes redact, as a tool result does.
import { redact } from '../core/redact.ts';
import type { PolicyDecision } from '../policy/types.ts';
import type { LayerReport, SandboxResult } from '../sandbox/types.ts';

export interface CallTrace {
  tool: string;
  path: string;
  caller: { pid: number; sid: number };
  started: Date;
  /** Absent when the call never reached the policy (unknown tool, input the tool cannot take). */
  decision?: PolicyDecision;
  /** The refusal before the policy, when there was one. */
  rule?: string;
  durationMs: number;
  status: 'ok' | 'error' | 'refused' | 'invalid input' | 'running';
  /** The sandboxed processes the call ran (execute_cmd). */
  processes: readonly SandboxResult[];
  /** The MCP server whose tool it was, and the layers its process runs under. */
  server?: { name: string; layers: readonly LayerReport[] | undefined };
}

function layerLines(layers: readonly LayerReport[], indent: string): string[] {
  const width = Math.max(...layers.map((layer) => layer.layer.length));
  return layers.map(
    (layer) =>
      `${indent}${layer.layer.padEnd(width)}  ${layer.applied ? 'applied' : 'SKIPPED'}  ${layer.detail}`,
  );
}

function decisionLine(trace: CallTrace): string {
  const { decision } = trace;
  if (!decision) return `decision: none (refused before the policy: ${trace.rule ?? 'unknown'})`;
  const reason = decision.kind === 'allow' ? '' : `: ${decision.reason}`;
  return `decision: ${decision.kind} (rule ${decision.rule})${reason}`;
}

function processLines(trace: CallTrace): string[] {
  if (trace.server) {
    const layers = trace.server.layers;
    return [
      `processes: none started by this call; MCP server ${trace.server.name} runs in the sandbox${layers ? ' with these layers:' : ''}`,
      ...(layers ? layerLines(layers, '  ') : []),
    ];
  }
  if (trace.processes.length === 0) {
    return [
      trace.decision?.kind === 'allow'
        ? `processes: none (${trace.tool} runs inside rune, under the policy's path and domain checks)`
        : 'processes: none',
    ];
  }
  return trace.processes.flatMap((run, index) => {
    const ended = run.timedOut
      ? 'timed out'
      : run.cancelled
        ? 'cancelled'
        : run.signal
          ? `killed by signal ${run.signal}`
          : `exit status ${run.exitCode}`;
    const stderr = run.stderr === '' ? ['  stderr: (empty)'] : ['  stderr:', ...indented(run.stderr)];
    return [
      `process ${index + 1}: ${ended}, ${Math.round(run.durationMs)} ms`,
      '  layers:',
      ...layerLines(run.layers, '    '),
      ...stderr,
    ];
  });
}

function indented(text: string): string[] {
  return text
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => `    ${line}`);
}

export function formatTrace(trace: CallTrace): string {
  const lines = [
    `call: ${trace.path} (tool ${trace.tool})`,
    `caller: pid ${trace.caller.pid}, session ${trace.caller.sid}`,
    `started: ${trace.started.toISOString()}`,
    `status: ${trace.status}`,
    ...(trace.status === 'running' ? [] : [decisionLine(trace), `duration: ${trace.durationMs} ms`]),
    ...(trace.status === 'running' ? [] : processLines(trace)),
  ];
  return redact(`${lines.join('\n')}\n`);
}
