// One round of tool calls (docs/adr/0007-agent-run-loop.md): each call decided by the policy gate in
// order, consecutive read-only calls run together, every other call alone, results in call order.

import { deriveConfig } from '../config/load.ts';
import { redact } from '../core/redact.ts';
import { grantedAccess } from '../policy/approval.ts';
import type { PolicyDecision, PolicyGate } from '../policy/types.ts';
import type { ToolCall } from '../providers/types.ts';
import { skippedLayersNote } from '../sandbox/summary.ts';
import { executeTool, type RegisteredTool, type ToolRegistry } from '../tools/registry.ts';
import type { ToolContext, ToolOutput } from '../tools/types.ts';
import { callScope } from './checkpoints/scope.ts';
import { createGrantedFiles } from './granted-files.ts';
import type { AgentEvent, CallCheckpointer, ToolCallRecord } from './types.ts';

interface PlannedCall {
  call: ToolCall;
  tool?: RegisteredTool;
  args?: Record<string, unknown>;
  decision: PolicyDecision;
  /** Set when the call must not run (invalid, unknown, denied): the result the model reads. */
  preset?: ToolOutput;
}

export interface ToolRunEnv {
  checkpoints?: CallCheckpointer;
  registry: ToolRegistry;
  offered: Set<string>;
  policy: PolicyGate;
  context: ToolContext;
  emit: (event: AgentEvent) => void;
  toolCalls: ToolCallRecord[];
}

/**
 * Decides every call in order (a confirmation prompt must not interleave with another) and runs
 * them: consecutive read-only calls together, every other call alone, so a write is never raced by
 * a read of the same file. A call is decided only after every earlier call with side effects has
 * run: decided up front, `ln -s ~ d` followed by `write_file d/.x` would be judged on the folder
 * `d` that the command then swapped for a symlink. Results come back in the order of the calls.
 */
export async function runToolCalls(calls: readonly ToolCall[], env: ToolRunEnv): Promise<ToolOutput[]> {
  const results: ToolOutput[] = new Array(calls.length);
  // Unknown tools are refused at planning, without side effects: they may join a read-only group.
  const readOnly = (call: ToolCall): boolean => env.registry.get(call.name)?.readOnly ?? true;
  let index = 0;
  while (index < calls.length) {
    let size = 1;
    if (readOnly(calls[index]!)) {
      while (index + size < calls.length && readOnly(calls[index + size]!)) size += 1;
    }
    const planned: PlannedCall[] = [];
    for (const call of calls.slice(index, index + size)) {
      env.emit({ type: 'tool_call', id: call.id, name: call.name, arguments: redact(call.arguments) });
      // After a cancel nobody is asked about the rest; perform() reports them as not started.
      planned.push(
        env.context.signal.aborted
          ? {
              call,
              decision: { kind: 'deny', reason: 'cancelled', rule: 'cancelled' },
              preset: { content: 'error: cancelled before it started', isError: true },
            }
          : await plan(call, env),
      );
    }
    const done = await Promise.all(planned.map((p) => perform(p, env)));
    for (const [offset, { output, record }] of done.entries()) {
      results[index + offset] = output;
      env.toolCalls.push(record);
    }
    index += size;
  }
  return results;
}

async function plan(call: ToolCall, env: ToolRunEnv): Promise<PlannedCall> {
  const deny = (rule: string, reason: string): PlannedCall => ({
    call,
    decision: { kind: 'deny', reason, rule },
    preset: { content: `error: ${reason}`, isError: true },
  });
  const tool = env.registry.get(call.name);
  if (!tool || !env.offered.has(call.name)) {
    const available = [...env.offered].filter((name) => env.registry.get(name)).join(', ');
    return deny('unknown_tool', `there is no tool named "${call.name}" in this run; available: ${available}`);
  }
  const parsed = await tool.parse(call.arguments);
  if (!parsed.ok) return deny('invalid_arguments', `${call.name}: ${parsed.error}`);

  let decision: PolicyDecision;
  try {
    decision = await env.policy.check({
      tool: call.name,
      args: parsed.args,
      source: tool.source,
      ...(tool.server === undefined ? {} : { server: tool.server }),
      readOnly: tool.readOnly,
      ...(tool.access ? { access: tool.access } : {}),
      ...(tool.preview ? { preview: () => tool.preview!(parsed.args, env.context) } : {}),
    });
  } catch (error) {
    decision = {
      kind: 'deny',
      reason: `the policy check failed: ${(error as Error).message}`,
      rule: 'policy_error',
    };
  }
  // The judged paths are for the tool, not for the event (whose shape readers rely on).
  const shown: PolicyDecision = decision.kind === 'allow' ? withoutPaths(decision) : decision;
  env.emit({ type: 'policy_decision', id: call.id, name: call.name, decision: shown });
  if (decision.kind === 'allow') return { call, tool, args: parsed.args, decision };
  const reason = decision.kind === 'deny' ? decision.reason : `needs confirmation: ${decision.reason}`;
  return {
    call,
    tool,
    decision,
    preset: { content: `blocked by policy (${decision.rule}): ${reason}`, isError: true },
  };
}

function withoutPaths(decision: Extract<PolicyDecision, { kind: 'allow' }>): PolicyDecision {
  const { paths: _paths, ...shown } = decision;
  return shown;
}

/** The file tools open the canonical paths the gate judged, not whatever the names lead to now. */
function judgedContext(decision: PolicyDecision, context: ToolContext): ToolContext {
  return decision.kind === 'allow' && decision.paths ? { ...context, judged: decision.paths } : context;
}

/** What an allowed call runs with: its context, and the granted files a command may make. */
interface Granted {
  context: ToolContext;
  files: string[];
}

/**
 * The call's checkpoint begun (when it can write and the session keeps checkpoints); done() ends
 * it. A granted file made for a command (granted-files.ts) is in it as not there before the call.
 */
function beforeCall(planned: PlannedCall, env: ToolRunEnv, granted: Granted): { done(): void } | undefined {
  const checkpoints = env.checkpoints;
  if (!checkpoints || !planned.tool) return undefined;
  const found = callScope(planned.tool, planned.args ?? {}, granted.context);
  const scope =
    granted.files.length > 0
      ? { roots: found?.roots ?? [], files: [...new Set([...(found?.files ?? []), ...granted.files])] }
      : found;
  if (!scope) return undefined;
  const { id, name } = planned.call;
  checkpoints.before(id, name, scope, granted.context.protectedPaths);
  return {
    done() {
      const { changed, partial } = checkpoints.after(id);
      env.emit({ type: 'checkpoint', id, name, changed, partial });
    },
  };
}

/**
 * What an allowed call runs with, approvals included (docs/adr/0033-run-outcomes.md): the paths and
 * domains its own question named, and those approved for the session, join the sandbox plan of
 * this call.
 */
function grantedContext(planned: PlannedCall, env: ToolRunEnv): Granted {
  const context = judgedContext(planned.decision, env.context);
  const grants = [
    ...(env.policy.granted?.() ?? []),
    ...((planned.decision.kind === 'allow' ? planned.decision.grants : undefined) ?? []),
  ];
  if (grants.length === 0) return { context, files: [] };
  const access = grantedAccess(grants);
  const { policy } = context.config;
  const granted: ToolContext = {
    ...context,
    readOnlyPaths: [...context.readOnlyPaths, ...access.read],
    readWritePaths: [...context.readWritePaths, ...access.write],
    ...(access.domains.length > 0
      ? {
          config: deriveConfig(context.config, {
            policy: { ...policy, allowed_domains: [...policy.allowed_domains, ...access.domains] },
          }),
        }
      : {}),
  };
  const files =
    planned.tool?.access?.kind === 'command'
      ? grants.filter((grant) => grant.list === 'allowed_files_rw').map((grant) => grant.value)
      : [];
  return { context: granted, files };
}

/** Runs an allowed call; a granted file that does not exist yet is made so the sandbox can bind it. */
async function executeGranted(planned: PlannedCall, granted: Granted): Promise<ToolOutput> {
  const undo = granted.files.length > 0 ? createGrantedFiles(granted.files) : undefined;
  try {
    return await executeTool(planned.tool!, planned.args!, granted.context);
  } finally {
    undo?.();
  }
}

async function perform(
  planned: PlannedCall,
  env: ToolRunEnv,
): Promise<{ output: ToolOutput; record: ToolCallRecord }> {
  const started = performance.now();
  const granted = planned.preset || env.context.signal.aborted ? undefined : grantedContext(planned, env);
  const checkpoint = granted ? beforeCall(planned, env, granted) : undefined;
  let output =
    planned.preset ??
    (granted
      ? await executeGranted(planned, granted)
      : { content: 'error: cancelled before it started', isError: true });
  // A write outside the sandbox (write_file) or a call to an MCP server (whose process writes
  // whenever it likes) may have planted git settings under a writable root; a sandboxed command
  // had its own check (its result carries layers). src/sandbox/git.ts.
  const tool = planned.preset ? undefined : planned.tool;
  if (tool && !output.layers && (!tool.readOnly || tool.source === 'mcp')) {
    const undone = env.context.executor.checkGit?.(env.context.readWritePaths);
    if (undone) output = { ...output, content: `${output.content}\n${undone}` };
  }
  checkpoint?.done();
  // The model learns when its command ran with layers missing: it must not assume a confinement.
  const note = skippedLayersNote(output.layers);
  const content = redact(note ? `${output.content}\n${note}` : output.content);
  env.emit({
    type: 'tool_result',
    id: planned.call.id,
    name: planned.call.name,
    isError: output.isError ?? false,
    content,
    ...(output.layers ? { layers: output.layers } : {}),
    ...(output.diff && !output.isError ? { diff: redact(output.diff) } : {}),
  });
  const record: ToolCallRecord = {
    id: planned.call.id,
    name: planned.call.name,
    arguments: redact(planned.call.arguments),
    decision: planned.decision.kind,
    rule: planned.decision.rule,
    isError: output.isError ?? false,
    ...(output.layers ? { layers: output.layers } : {}),
    durationMs: Math.round(performance.now() - started),
  };
  return { output: { ...output, content }, record };
}
