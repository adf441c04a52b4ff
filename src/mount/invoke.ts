// One call made through the mount, exactly as a model's call is made: the run loop's own round of
// tool calls (runToolCalls: the tool's argument checks, the policy gate with its audit line, the
// sandbox for processes, the git check, redaction), with the caller's pid and session id on the
// policy's record. What it returns is what a read of the endpoint gives, and its `.log`.
import { constants } from 'node:os';
import { runToolCalls } from '../agent/tool-calls.ts';
import { type ToolContextOptions, toolContextFor } from '../agent/tool-context.ts';
import type { ToolCallRecord } from '../agent/types.ts';
import type { CallerProcess, PolicyDecision, PolicyGate } from '../policy/types.ts';
import type { LayerReport, SandboxExecutor, SandboxResult } from '../sandbox/types.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { argumentsFrom } from './input.ts';
import { type CallTrace, formatTrace } from './log.ts';

const { EACCES, EINVAL, EIO } = constants.errno;

export interface CallOutcome {
  /** What a read of the endpoint returns. */
  text: string;
  /** 0, or the error the read after the text fails with. */
  errno: number;
  /** The `.log` companion's text. */
  log: string;
}

export interface MountCalls {
  registry: ToolRegistry;
  gate: PolicyGate;
  executor: SandboxExecutor;
  context: ToolContextOptions;
  /** The layers of an MCP server's process, for the log of a call to one of its tools. */
  serverLayers(server: string): readonly LayerReport[] | undefined;
  /** Aborted when the mount ends: running calls are cancelled. */
  signal: AbortSignal;
  now?: () => Date;
}

export interface CallRequest {
  /** The registry's name of the tool. */
  tool: string;
  /** The endpoint's path in the mount, for the log. */
  path: string;
  input: string;
  caller: CallerProcess;
}

/** The executor, recording each sandboxed run of this call for its log. */
function recording(executor: SandboxExecutor, runs: SandboxResult[]): SandboxExecutor {
  return {
    run: async (request) => {
      const result = await executor.run(request);
      runs.push(result);
      return result;
    },
    spawn: (request) => executor.spawn(request),
    describe: () => executor.describe(),
    ...(executor.checkGit ? { checkGit: (roots: readonly string[]) => executor.checkGit!(roots) } : {}),
  };
}

function outcomeOf(record: ToolCallRecord | undefined, decision: PolicyDecision | undefined) {
  if (!record || record.rule === 'unknown_tool' || record.rule === 'invalid_arguments')
    return { status: 'invalid input', errno: EINVAL } as const;
  if (decision?.kind !== 'allow') return { status: 'refused', errno: EACCES } as const;
  return record.isError ? ({ status: 'error', errno: EIO } as const) : ({ status: 'ok', errno: 0 } as const);
}

let sequence = 0;

export async function runMountedCall(calls: MountCalls, request: CallRequest): Promise<CallOutcome> {
  const started = (calls.now ?? (() => new Date()))();
  const t0 = performance.now();
  const tool = calls.registry.get(request.tool);
  const runs: SandboxResult[] = [];
  const policy: PolicyGate = {
    check: (call) => calls.gate.check({ ...call, caller: request.caller }),
    ...(calls.gate.protectedPaths ? { protectedPaths: () => calls.gate.protectedPaths!() } : {}),
  };
  const toolCalls: ToolCallRecord[] = [];
  let decision: PolicyDecision | undefined;
  const [output] = await runToolCalls(
    [
      {
        id: `mount-${++sequence}`,
        name: request.tool,
        arguments: argumentsFrom(request.input, tool?.definition.parameters ?? {}),
      },
    ],
    {
      registry: calls.registry,
      offered: new Set(calls.registry.names()),
      policy,
      context: toolContextFor(calls.context, calls.gate, recording(calls.executor, runs), calls.signal),
      emit: (event) => {
        if (event.type === 'policy_decision') decision = event.decision;
      },
      toolCalls,
    },
  );
  const record = toolCalls[0];
  const { status, errno } = outcomeOf(record, decision);
  const trace: CallTrace = {
    tool: request.tool,
    path: request.path,
    caller: request.caller,
    started,
    ...(decision ? { decision } : {}),
    ...(record && !decision ? { rule: record.rule } : {}),
    durationMs: Math.round(performance.now() - t0),
    status,
    processes: runs,
    ...(tool?.server !== undefined
      ? { server: { name: tool.server, layers: calls.serverLayers(tool.server) } }
      : {}),
  };
  const text = output?.content ?? '';
  return { text: text.endsWith('\n') || text === '' ? text : `${text}\n`, errno, log: formatTrace(trace) };
}
