// The agent run loop (docs/adr/0007-agent-run-loop.md): skills, system prompt, model calls with
// tools, every tool call through the policy gate and (for processes) the sandbox, stop reasons, the
// answer-now round, parallel read-only calls, compaction near the context window, the whole-run
// timeout and traces.
import { join } from 'node:path';
import { settingName } from '../config/load.ts';
import { type ErrorCode, isRuneError, RuneError, toRuneError } from '../core/errors.ts';
import { absolutePath, homeDir, runeHome } from '../core/paths.ts';
import { redact } from '../core/redact.ts';
import { newUuid } from '../core/uuid.ts';
import { protectedPathsFor } from '../policy/gate.ts';
import type { PolicyDecision, PolicyGate } from '../policy/types.ts';
import type { ChatMessage, Provider, ToolCall, Usage } from '../providers/types.ts';
import { skippedLayersNote } from '../sandbox/summary.ts';
import type { SandboxExecutor } from '../sandbox/types.ts';
import {
  filterToolsBySkills,
  findSkillRefs,
  loadSkills,
  resolveSkillRefs,
  type SkillCatalog,
  skillMessage,
} from '../skills/index.ts';
import { toolEnvironment } from '../tools/env.ts';
import { executeTool, type RegisteredTool, ToolRegistry } from '../tools/registry.ts';
import type { ToolContext, ToolOutput } from '../tools/types.ts';
import { compactMessages, estimateTokens } from './compaction.ts';
import {
  createDefaultExecutor,
  createDefaultPolicy,
  createDefaultProvider,
  requireStrictLayers,
} from './deps.ts';
import { ANSWER_NOW_PROMPT, buildSystemPrompt } from './prompt.ts';
import { writeTrace } from './trace.ts';
import type { AgentEvent, AgentRunOptions, AgentRunResult, StopReason, ToolCallRecord } from './types.ts';

const EMPTY_CATALOG: SkillCatalog = { skills: new Map(), problems: [] };

export const ZERO_USAGE: Usage = Object.freeze({ inputTokens: 0, outputTokens: 0, totalTokens: 0 });

function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
}

/** Skill folders: skills_dir from the config (relative to cwd), then $RUNE_HOME/skills. */
export function skillDirs(options: Pick<AgentRunOptions, 'config' | 'cwd' | 'env'>): string[] {
  const dirs: string[] = [];
  const configured = options.config.skills_dir;
  if (configured) dirs.push(absolutePath(configured, options.cwd, homeDir(options.env)));
  dirs.push(join(runeHome(options.env), 'skills'));
  return dirs;
}

interface PlannedCall {
  call: ToolCall;
  tool?: RegisteredTool;
  args?: Record<string, unknown>;
  decision: PolicyDecision;
  /** Set when the call must not run (invalid, unknown, denied): the result the model reads. */
  preset?: ToolOutput;
}

/** Exit code of a finished run (docs/exit-codes.md). */
export function exitCodeForResult(result: Pick<AgentRunResult, 'status' | 'error'>): number {
  switch (result.status) {
    case 'FinalAnswer':
      return 0;
    case 'MaxSteps':
      return new RuneError('MAX_STEPS', '').exitCode;
    case 'TokenBudgetExhausted':
      return new RuneError('TOKEN_BUDGET', '').exitCode;
    case 'UserInterrupt':
      return new RuneError('INTERRUPTED', '').exitCode;
    default:
      return new RuneError((result.error?.code as ErrorCode) ?? 'INTERNAL', '').exitCode;
  }
}

export async function runAgent(options: AgentRunOptions): Promise<AgentRunResult> {
  const { config, logger, cwd } = options;
  const sessionId = options.sessionId ?? newUuid();
  const startedAt = new Date();
  const traceEvents: AgentEvent[] = [];
  const emit = (event: AgentEvent): void => {
    if (config.trace && event.type !== 'text') traceEvents.push(event);
    try {
      options.onEvent?.(event);
    } catch (error) {
      logger.warn('agent.event_listener_failed', {
        message: `an event listener failed: ${(error as Error).message}`,
      });
    }
  };

  // The whole-run timeout and the caller's cancel share one signal; which fired decides the status.
  const timeoutSignal = config.timeout_secs ? AbortSignal.timeout(config.timeout_secs * 1000) : undefined;
  const signals = [options.signal, timeoutSignal].filter((s): s is AbortSignal => s !== undefined);
  const signal = signals.length > 0 ? AbortSignal.any(signals) : new AbortController().signal;

  let provider: Provider | undefined = options.provider;
  let model = config.model ?? '';
  let messages: ChatMessage[] = [];
  let usage: Usage = { ...ZERO_USAGE };
  let steps = 0;
  const toolCalls: ToolCallRecord[] = [];
  let unknownSkills: string[] = [];

  const finish = async (status: StopReason, answer: string, error?: RuneError): Promise<AgentRunResult> => {
    const result: AgentRunResult = {
      answer,
      status,
      steps,
      usage,
      toolCalls,
      model,
      sessionId,
      messages,
      ...(error ? { error: { code: error.code, message: redact(error.message) } } : {}),
      ...(unknownSkills.length > 0 ? { unknownSkills } : {}),
    };
    emit({ type: 'run_end', status, steps, usage });
    if (config.trace) {
      try {
        await writeTrace(config.trace, {
          options,
          result,
          events: traceEvents,
          startedAt,
          provider: provider?.name,
        });
      } catch (traceError) {
        logger.warn('agent.trace_failed', {
          message: `could not write the trace: ${(traceError as Error).message}`,
        });
      }
    }
    return result;
  };

  const abortStatus = (): Promise<AgentRunResult> => {
    if (timeoutSignal?.aborted && !options.signal?.aborted) {
      return finish(
        'Error',
        '',
        new RuneError(
          'RUN_TIMEOUT',
          `the run did not finish within ${config.timeout_secs} s (${settingName(config, 'timeout_secs', 'timeout_secs')})`,
        ),
      );
    }
    return finish('UserInterrupt', '');
  };

  let policy: PolicyGate;
  let executor: SandboxExecutor;
  let registry: ToolRegistry;
  try {
    // Strict mode refuses before anything else (no model call, no tool): a missing layer ends the run.
    executor = options.executor ?? createDefaultExecutor(options);
    requireStrictLayers(config, executor);
    provider ??= await createDefaultProvider(options);
    policy = options.policy ?? (await createDefaultPolicy(options, sessionId));
    registry = options.tools ?? new ToolRegistry();
    for (const tool of options.extraTools ?? []) registry.add(tool);
    if (!model)
      throw new RuneError(
        'USAGE',
        'no model is set: pass --model, set RUNE_MODEL, or model in rune.toml (`rune init` writes one)',
      );

    // 1. Skills named in the prompt.
    // Skill folders are read only when the prompt names one.
    const catalog =
      findSkillRefs(options.prompt).length > 0 ? await loadSkills(skillDirs(options)) : EMPTY_CATALOG;
    for (const problem of catalog.problems) logger.warn('skills.invalid', { message: problem });
    const skills = resolveSkillRefs(options.prompt, catalog);
    unknownSkills = skills.unknown;
    for (const name of skills.unknown) {
      logger.warn('skills.unknown', {
        message: `unknown skill @${name} (looked in ${skillDirs(options).join(', ')})`,
      });
    }

    // 2. System prompt, earlier conversation, skills, the prompt.
    const system = buildSystemPrompt({
      config,
      cwd,
      ...(options.systemPrompt === undefined ? {} : { systemPrompt: options.systemPrompt }),
      ...(options.appendSystemPrompt === undefined ? {} : { appendSystemPrompt: options.appendSystemPrompt }),
    });
    const history = options.history ?? [];
    messages = [
      { role: 'system', content: system },
      ...(history[0]?.role === 'system' ? history.slice(1) : history),
      ...skills.used.map((skill): ChatMessage => ({ role: 'system', content: skillMessage(skill) })),
      { role: 'user', content: options.prompt },
    ];
    const offered = new Set(filterToolsBySkills(registry.names(), skills.used));

    emit({ type: 'run_start', sessionId, model, provider: provider.name });

    const context: ToolContext = {
      cwd,
      config,
      executor,
      env: toolEnvironment(options.env, config.sandbox.env_passthrough),
      readOnlyPaths: [
        cwd,
        ...config.policy.allowed_paths_ro.map((p) => absolutePath(p, cwd, homeDir(options.env))),
        ...config.policy.allowed_files_ro.map((p) => absolutePath(p, cwd, homeDir(options.env))),
        ...(options.readPaths ?? []),
      ],
      readWritePaths: [
        ...config.policy.allowed_paths_rw.map((p) => absolutePath(p, cwd, homeDir(options.env))),
        ...config.policy.allowed_files_rw.map((p) => absolutePath(p, cwd, homeDir(options.env))),
      ],
      protectedPaths: policy.protectedPaths?.() ?? protectedPathsFor(config, cwd, options.env),
      signal,
    };

    const budget = config.token_budget;
    let budgetSpent = false;
    let lastText = '';
    for (;;) {
      if (signal.aborted) return await abortStatus();
      steps += 1;
      const lastStep = steps >= config.max_steps || budgetSpent;

      // Compaction near the context window, before the request that would overflow it.
      if (estimateTokens(messages) > config.context_window * config.compact_threshold) {
        try {
          const compacted = await compactMessages({ provider, model, messages, signal });
          if (compacted) {
            messages = compacted.messages;
            usage = addUsage(usage, compacted.usage);
            emit({
              type: 'compaction',
              beforeTokens: compacted.beforeTokens,
              afterTokens: compacted.afterTokens,
            });
          }
        } catch (error) {
          if (signal.aborted) return await abortStatus();
          logger.warn('agent.compaction_failed', {
            message: `context compaction failed: ${(error as Error).message}`,
          });
        }
      }

      const notices = options.takeNotices?.() ?? [];
      if (notices.length > 0) messages.push({ role: 'user', content: `[rune] ${notices.join('\n')}` });
      if (lastStep && steps > 1) messages.push({ role: 'user', content: ANSWER_NOW_PROMPT });
      const tools = lastStep
        ? []
        : registry
            .list()
            .filter((t) => offered.has(t.definition.name))
            .map((t) => t.definition);
      let response: Awaited<ReturnType<Provider['complete']>>;
      try {
        response = await provider.complete({
          model,
          messages,
          tools,
          maxOutputTokens: config.max_output_tokens,
          signal,
          onText: (delta) => emit({ type: 'text', delta }),
        });
      } catch (error) {
        if (signal.aborted) return await abortStatus();
        // Providers throw RuneErrors; anything else from that call is still the provider's failure.
        throw toRuneError(error, 'PROVIDER_ERROR');
      }
      usage = addUsage(usage, response.usage);
      if (response.model) model = response.model;
      emit({ type: 'model_usage', step: steps, usage: response.usage });
      if (response.content) lastText = response.content;

      if (response.toolCalls.length === 0 || lastStep) {
        // Tool calls on the answer-now round cannot run; they are dropped so the stored conversation
        // never holds a call without its result.
        messages.push({ role: 'assistant', content: response.content });
        if (response.content.trim() || !lastStep) return await finish('FinalAnswer', response.content);
        return await finish(budgetSpent ? 'TokenBudgetExhausted' : 'MaxSteps', lastText);
      }

      messages.push({ role: 'assistant', content: response.content, toolCalls: response.toolCalls });
      const results = await runToolCalls(response.toolCalls, {
        registry,
        offered,
        policy,
        context,
        emit,
        toolCalls,
      });
      for (const [index, call] of response.toolCalls.entries()) {
        const output = results[index]!;
        messages.push({
          role: 'tool',
          toolCallId: call.id,
          name: call.name,
          content: output.content,
          ...(output.isError ? { isError: true } : {}),
        });
      }
      if (signal.aborted) return await abortStatus();
      if (budget !== undefined && usage.totalTokens >= budget) budgetSpent = true;
    }
  } catch (thrown) {
    if (signal.aborted && !isRuneError(thrown)) return await abortStatus();
    const error = toRuneError(thrown);
    logger.debug('agent.run_error', { code: error.code, message: error.message });
    return await finish('Error', '', error);
  }
}

interface ToolRunEnv {
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
async function runToolCalls(calls: readonly ToolCall[], env: ToolRunEnv): Promise<ToolOutput[]> {
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
      ...(tool.preview ? { preview: () => tool.preview!(parsed.args, env.context) } : {}),
    });
  } catch (error) {
    decision = {
      kind: 'deny',
      reason: `the policy check failed: ${(error as Error).message}`,
      rule: 'policy_error',
    };
  }
  env.emit({ type: 'policy_decision', id: call.id, name: call.name, decision });
  if (decision.kind === 'allow') return { call, tool, args: parsed.args, decision };
  const reason = decision.kind === 'deny' ? decision.reason : `needs confirmation: ${decision.reason}`;
  return {
    call,
    tool,
    decision,
    preset: { content: `blocked by policy (${decision.rule}): ${reason}`, isError: true },
  };
}

async function perform(
  planned: PlannedCall,
  env: ToolRunEnv,
): Promise<{ output: ToolOutput; record: ToolCallRecord }> {
  const started = performance.now();
  let output =
    planned.preset ??
    (env.context.signal.aborted
      ? { content: 'error: cancelled before it started', isError: true }
      : await executeTool(planned.tool!, planned.args!, env.context));
  // A write outside the sandbox (write_file) or a call to an MCP server (whose process writes
  // whenever it likes) may have planted git settings under a writable root; a sandboxed command
  // had its own check (its result carries layers). src/sandbox/git.ts.
  const tool = planned.preset ? undefined : planned.tool;
  if (tool && !output.layers && (!tool.readOnly || tool.source === 'mcp')) {
    const undone = env.context.executor.checkGit?.(env.context.readWritePaths);
    if (undone) output = { ...output, content: `${output.content}\n${undone}` };
  }
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
