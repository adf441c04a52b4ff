// The agent run loop (docs/adr/0007-agent-run-loop.md): skills, system prompt, model calls with
// tools, every tool call through the policy gate and (for processes) the sandbox, stop reasons, the
// answer-now round, parallel read-only calls, compaction near the context window, the whole-run
// timeout and traces.
import { join } from 'node:path';
import { settingName } from '../config/load.ts';
import { type Deadline, startDeadline } from '../core/deadline.ts';
import { type ErrorCode, isRuneError, RuneError, toRuneError } from '../core/errors.ts';
import { Grants, Root } from '../core/fd/index.ts';
import { absolutePath, homeDir, runeHome } from '../core/paths.ts';
import { redact } from '../core/redact.ts';
import { newUuid } from '../core/uuid.ts';
import { PROVIDER_LABELS } from '../providers/credentials.ts';
import type { ChatMessage, ChatResponse, Provider, Usage } from '../providers/types.ts';
import type { SandboxExecutor } from '../sandbox/types.ts';
import {
  filterToolsBySkills,
  findSkillRefs,
  loadSkills,
  resolveSkillRefs,
  type SkillCatalog,
  skillMessage,
} from '../skills/index.ts';
import { ToolRegistry } from '../tools/registry.ts';
import type { ToolContext } from '../tools/types.ts';
import { compactMessages, estimateTokens } from './compaction.ts';
import {
  createDefaultExecutor,
  createDefaultPolicy,
  createDefaultProvider,
  requireStrictLayers,
} from './deps.ts';
import { ANSWER_NOW_PROMPT, buildSystemPrompt } from './prompt.ts';
import { type CutState, judgeStop, MAX_CONTINUATIONS, NO_CUT, type StopContext } from './stops.ts';
import { runToolCalls, type ToolRunEnv } from './tool-calls.ts';
import { toolContextFor } from './tool-context.ts';
import { openTraceFolder, writeTrace } from './trace.ts';
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
    case 'OutputLimit':
      return new RuneError('OUTPUT_LIMIT', '').exitCode;
    case 'Refused':
      return new RuneError('MODEL_REFUSED', '').exitCode;
    default:
      return new RuneError((result.error?.code as ErrorCode) ?? 'INTERNAL', '').exitCode;
  }
}

export async function runAgent(options: AgentRunOptions): Promise<AgentRunResult> {
  const run = new RunState(options);
  try {
    const prepared = await prepareRun(options, run);
    return await runLoop(options, run, prepared);
  } catch (thrown) {
    if (run.signal.aborted && !isRuneError(thrown)) return await run.abortStatus();
    const error = toRuneError(thrown);
    options.logger.debug('agent.run_error', { code: error.code, message: error.message });
    return await run.finish('Error', '', error);
  } finally {
    run.grants.close();
    run.closeTrace();
  }
}

/** What a run accumulates, its events and trace, its cancel signal, and how it ends. */
class RunState {
  readonly sessionId: string;
  readonly startedAt = new Date();
  /** The whole-run timeout and the caller's cancel share one signal; which fired decides the status. */
  readonly signal: AbortSignal;
  /** timeout_secs, following the caller's cancel; it holds under garbage collection (src/core/deadline.ts). */
  private readonly deadline: Deadline | undefined;
  provider: Provider | undefined;
  model: string;
  messages: ChatMessage[] = [];
  usage: Usage = { ...ZERO_USAGE };
  steps = 0;
  readonly toolCalls: ToolCallRecord[] = [];
  /** The run's grants, pinned before its first tool call (src/core/fd/grants.ts). */
  readonly grants = new Grants();
  unknownSkills: string[] = [];
  private readonly traceEvents: AgentEvent[] = [];
  /** `--trace`'s folder, held from the start (src/agent/trace.ts), or why it could not be. */
  private readonly traceFolder: Root | Error | undefined;

  constructor(private readonly options: AgentRunOptions) {
    const { config } = options;
    this.sessionId = options.sessionId ?? newUuid();
    this.provider = options.provider;
    this.model = config.model ?? '';
    this.deadline = config.timeout_secs
      ? startDeadline(config.timeout_secs * 1000, options.signal)
      : undefined;
    this.signal = this.deadline?.signal ?? options.signal ?? new AbortController().signal;
    if (config.trace) {
      try {
        this.traceFolder = openTraceFolder(options.cwd, config.trace);
      } catch (error) {
        this.traceFolder = error as Error;
      }
    }
  }

  closeTrace(): void {
    if (this.traceFolder instanceof Root) this.traceFolder.close();
  }

  readonly emit = (event: AgentEvent): void => {
    if (this.options.config.trace && event.type !== 'text') this.traceEvents.push(event);
    try {
      this.options.onEvent?.(event);
    } catch (error) {
      this.options.logger.warn('agent.event_listener_failed', {
        message: `an event listener failed: ${(error as Error).message}`,
      });
    }
  };

  addUsage(more: Usage): void {
    this.usage = addUsage(this.usage, more);
  }

  async finish(status: StopReason, answer: string, error?: RuneError): Promise<AgentRunResult> {
    const { options } = this;
    this.deadline?.clear();
    const result: AgentRunResult = {
      answer,
      status,
      steps: this.steps,
      usage: this.usage,
      toolCalls: this.toolCalls,
      model: this.model,
      sessionId: this.sessionId,
      messages: this.messages,
      ...(error ? { error: { code: error.code, message: redact(error.message) } } : {}),
      ...(this.unknownSkills.length > 0 ? { unknownSkills: this.unknownSkills } : {}),
    };
    this.emit({ type: 'run_end', status, steps: this.steps, usage: this.usage });
    if (this.traceFolder) {
      try {
        if (this.traceFolder instanceof Error) throw this.traceFolder;
        writeTrace(this.traceFolder, {
          options,
          result,
          events: this.traceEvents,
          startedAt: this.startedAt,
          provider: this.provider?.name,
        });
      } catch (traceError) {
        options.logger.warn('agent.trace_failed', {
          message: `could not write the trace: ${(traceError as Error).message}`,
        });
      }
    }
    return result;
  }

  abortStatus(): Promise<AgentRunResult> {
    const { config } = this.options;
    if (this.deadline?.expired) {
      return this.finish(
        'Error',
        '',
        new RuneError(
          'RUN_TIMEOUT',
          `the run did not finish within ${config.timeout_secs} s (${settingName(config, 'timeout_secs', 'timeout_secs')})`,
        ),
      );
    }
    return this.finish('UserInterrupt', '');
  }
}

interface PreparedRun {
  provider: Provider;
  registry: ToolRegistry;
  /** Tool names offered to the model (skills may narrow them). */
  offered: Set<string>;
  /** The policy gate and the tools' context, built at the first tool call. */
  toolEnv: () => Promise<ToolRunEnv>;
}

/**
 * Everything before the first model request, and nothing more: the request leaves before any
 * policy, path or sandbox planning, which a run that calls no tool never pays for. Strict mode is
 * the exception: it refuses before the model is called when a layer is missing.
 */
async function prepareRun(options: AgentRunOptions, run: RunState): Promise<PreparedRun> {
  const { config, logger } = options;
  const executor = options.executor ?? createDefaultExecutor(options);
  requireStrictLayers(config, executor);
  run.provider ??= await createDefaultProvider(options);
  const provider = run.provider;
  if (options.images?.length && !provider.images) {
    throw new RuneError(
      'USAGE',
      `images are not sent to ${provider.name} by rune (${options.images.map((image) => image.name).join(', ')}); use a provider that takes them: openai, openrouter, anthropic or gemini`,
    );
  }
  const registry = options.tools ?? new ToolRegistry();
  for (const tool of options.extraTools ?? []) registry.add(tool);
  if (!run.model)
    throw new RuneError(
      'USAGE',
      'no model is set: pass --model, set RUNE_MODEL, or model in rune.toml (`rune init` writes one)',
    );

  // 1. Skills named in the prompt. Skill folders are read only when the prompt names one.
  const catalog =
    findSkillRefs(options.prompt).length > 0 ? await loadSkills(skillDirs(options)) : EMPTY_CATALOG;
  for (const problem of catalog.problems) logger.warn('skills.invalid', { message: problem });
  const skills = resolveSkillRefs(options.prompt, catalog);
  run.unknownSkills = skills.unknown;
  for (const name of skills.unknown) {
    logger.warn('skills.unknown', {
      message: `unknown skill @${name} (looked in ${skillDirs(options).join(', ')})`,
    });
  }

  // 2. System prompt, earlier conversation, skills, the prompt.
  const system = buildSystemPrompt({
    config,
    cwd: options.cwd,
    ...(options.systemPrompt === undefined ? {} : { systemPrompt: options.systemPrompt }),
    ...(options.appendSystemPrompt === undefined ? {} : { appendSystemPrompt: options.appendSystemPrompt }),
  });
  const history = options.history ?? [];
  run.messages = [
    { role: 'system', content: system },
    ...(history[0]?.role === 'system' ? history.slice(1) : history),
    ...skills.used.map((skill): ChatMessage => ({ role: 'system', content: skillMessage(skill) })),
    { role: 'user', content: options.prompt, ...(options.images?.length ? { images: options.images } : {}) },
  ];
  const offered = new Set(filterToolsBySkills(registry.names(), skills.used));
  run.emit({ type: 'run_start', sessionId: run.sessionId, model: run.model, provider: provider.name });
  return { provider, registry, offered, toolEnv: lazyToolEnv(options, run, executor, registry, offered) };
}

/**
 * The policy gate (with the project's rules and the secrets floor resolved) and the tools' context
 * (readable, writable and protected paths), built once, when the model first calls a tool.
 */
function lazyToolEnv(
  options: AgentRunOptions,
  run: RunState,
  executor: SandboxExecutor,
  registry: ToolRegistry,
  offered: Set<string>,
): () => Promise<ToolRunEnv> {
  let env: Promise<ToolRunEnv> | undefined;
  const build = async (): Promise<ToolRunEnv> => {
    const policy = options.policy ?? (await createDefaultPolicy(options, run.sessionId, executor));
    const context: ToolContext = {
      ...toolContextFor(options, policy, executor, run.signal),
      grants: run.grants,
    };
    // Resolved once, now: a call that later moves a granted folder is refused, never followed.
    run.grants.pinAll([...context.readOnlyPaths, ...context.readWritePaths]);
    return {
      registry,
      offered,
      policy,
      context,
      emit: run.emit,
      toolCalls: run.toolCalls,
      ...(options.checkpoints ? { checkpoints: options.checkpoints } : {}),
    };
  };
  return () => {
    env ??= build();
    return env;
  };
}

/** Model request after model request until an answer, a stop reason or a cancel. */
async function runLoop(
  options: AgentRunOptions,
  run: RunState,
  prepared: PreparedRun,
): Promise<AgentRunResult> {
  const { config } = options;
  const budget = config.token_budget;
  let budgetSpent = false;
  let lastText = '';
  let cut: CutState = NO_CUT;
  for (;;) {
    if (run.signal.aborted) return await run.abortStatus();
    run.steps += 1;
    const lastStep = run.steps >= config.max_steps || budgetSpent;

    // Compaction near the context window, before the request that would overflow it.
    if (!(await compactIfNeeded(options, run, prepared.provider))) return await run.abortStatus();

    const notices = options.takeNotices?.() ?? [];
    if (notices.length > 0) run.messages.push({ role: 'user', content: `[rune] ${notices.join('\n')}` });
    if (lastStep && run.steps > 1) run.messages.push({ role: 'user', content: ANSWER_NOW_PROMPT });
    const tools = lastStep
      ? []
      : prepared.registry
          .list()
          .filter((t) => prepared.offered.has(t.definition.name))
          .map((t) => t.definition);
    let response: Awaited<ReturnType<Provider['complete']>>;
    try {
      response = await prepared.provider.complete({
        model: run.model,
        messages: run.messages,
        tools,
        maxOutputTokens: config.max_output_tokens,
        signal: run.signal,
        ...(options.streamText === false
          ? {}
          : { onText: (delta: string) => run.emit({ type: 'text', delta }) }),
      });
    } catch (error) {
      if (run.signal.aborted) return await run.abortStatus();
      // Providers throw RuneErrors; anything else from that call is still the provider's failure.
      throw toRuneError(error, 'PROVIDER_ERROR');
    }
    run.addUsage(response.usage);
    if (response.model) run.model = response.model;
    run.emit({ type: 'model_usage', step: run.steps, usage: response.usage });

    // How the answer ended: cut, refused, malformed, or as usual (docs/adr/0033-run-outcomes.md).
    const stop = judgeStop(response, cut, stopContext(options, prepared.provider, lastStep));
    if (stop.kind === 'end') {
      if (response.content) run.messages.push({ role: 'assistant', content: response.content });
      return await run.finish(stop.status, stop.answer, stop.error);
    }
    if (stop.kind === 'again') {
      // Nothing of a cut reply runs; the model hears why and is asked again (a step of its own).
      if (response.content) run.messages.push({ role: 'assistant', content: response.content });
      run.messages.push({ role: 'user', content: stop.notice });
      options.logger.warn('agent.output_cut', { message: stopNote(response, stop.state.cuts) });
      cut = stop.state;
      continue;
    }
    cut = stop.state;
    if (response.finishReason === 'other') {
      options.logger.warn('agent.unknown_stop', {
        message: `the model's answer ended with ${response.stopDetail ?? 'an unknown reason'}, which rune does not know; it is taken as the end of the answer`,
      });
    }
    if (response.content) lastText = response.content;

    if (response.toolCalls.length === 0 || lastStep) {
      // Tool calls on the answer-now round cannot run; they are dropped so the stored conversation
      // never holds a call without its result.
      run.messages.push({ role: 'assistant', content: response.content });
      if (response.content.trim() || !lastStep) return await run.finish('FinalAnswer', stop.answer);
      return await run.finish(budgetSpent ? 'TokenBudgetExhausted' : 'MaxSteps', lastText);
    }

    run.messages.push({ role: 'assistant', content: response.content, toolCalls: response.toolCalls });
    const results = await runToolCalls(response.toolCalls, await prepared.toolEnv());
    for (const [index, call] of response.toolCalls.entries()) {
      const output = results[index]!;
      run.messages.push({
        role: 'tool',
        toolCallId: call.id,
        name: call.name,
        content: output.content,
        ...(output.isError ? { isError: true } : {}),
      });
    }
    if (run.signal.aborted) return await run.abortStatus();
    if (budget !== undefined && run.usage.totalTokens >= budget) budgetSpent = true;
  }
}

function stopContext(options: AgentRunOptions, provider: Provider, lastStep: boolean): StopContext {
  const { config } = options;
  return {
    lastStep,
    maxOutputTokens: config.max_output_tokens,
    setting: settingName(config, 'max_output_tokens', 'max_output_tokens'),
    provider: PROVIDER_LABELS[provider.name] ?? provider.name,
  };
}

/** What stderr says when a reply was cut and the model is asked again. */
function stopNote(response: ChatResponse, cuts: number): string {
  const why = response.finishReason === 'malformed_call' ? 'a malformed tool call' : 'the output token limit';
  const what = response.toolCalls.length > 0 ? 'a tool call' : 'the answer';
  return `the model's reply ended with ${why} (${response.stopDetail ?? response.finishReason}): ${response.finishReason === 'malformed_call' ? 'nothing was run' : `${what} was cut`}; asking it again (${cuts} of ${MAX_CONTINUATIONS})`;
}

/** Compacts the conversation near the context window. False when the run was cancelled meanwhile. */
async function compactIfNeeded(
  options: AgentRunOptions,
  run: RunState,
  provider: Provider,
): Promise<boolean> {
  const { config } = options;
  if (estimateTokens(run.messages) <= config.context_window * config.compact_threshold) return true;
  try {
    const compacted = await compactMessages({
      provider,
      model: run.model,
      messages: run.messages,
      signal: run.signal,
    });
    if (compacted) {
      run.messages = compacted.messages;
      run.addUsage(compacted.usage);
      run.emit({
        type: 'compaction',
        beforeTokens: compacted.beforeTokens,
        afterTokens: compacted.afterTokens,
      });
    }
  } catch (error) {
    if (run.signal.aborted) return false;
    options.logger.warn('agent.compaction_failed', {
      message: `context compaction failed: ${(error as Error).message}`,
    });
  }
  return true;
}
