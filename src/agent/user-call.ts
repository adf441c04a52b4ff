// A tool call the person makes from the session (`!cmd` runs execute_cmd, an `@file` mention runs
// read_file): the same policy gate, sandbox, events and result shape as a call of the model.
import { newUuid } from '../core/uuid.ts';
import type { PolicyGate } from '../policy/types.ts';
import type { SandboxExecutor } from '../sandbox/types.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { ToolOutput } from '../tools/types.ts';
import { runToolCalls } from './tool-calls.ts';
import { toolContextFor } from './tool-context.ts';
import type { AgentEvent, AgentRunOptions, ToolCallRecord } from './types.ts';

export interface UserCallOptions extends Pick<AgentRunOptions, 'config' | 'cwd' | 'env'> {
  policy: PolicyGate;
  executor: SandboxExecutor;
  registry: ToolRegistry;
  signal: AbortSignal;
  onEvent?: (event: AgentEvent) => void;
}

export async function runUserCall(
  options: UserCallOptions,
  name: string,
  args: Record<string, unknown>,
): Promise<{ output: ToolOutput; record: ToolCallRecord }> {
  const context = toolContextFor(options, options.policy, options.executor, options.signal);
  const records: ToolCallRecord[] = [];
  const [output] = await runToolCalls([{ id: `user_${newUuid()}`, name, arguments: JSON.stringify(args) }], {
    registry: options.registry,
    offered: new Set([name]),
    policy: options.policy,
    context,
    emit: options.onEvent ?? (() => {}),
    toolCalls: records,
  });
  return { output: output!, record: records[0]! };
}
