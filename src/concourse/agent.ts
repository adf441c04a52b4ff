// One agent run for the resource: the source becomes the whole configuration (no rune.toml, no
// RUNE_* variables: a pipeline's behaviour must not depend on the worker), nothing ever prompts,
// progress goes to the build log, and a run without a final answer fails the step.
import { createHash } from 'node:crypto';
import { requireStrictLayers } from '../agent/deps.ts';
import type { AgentEvent, AgentRunOptions, AgentRunResult } from '../agent/types.ts';
import { loadConfig } from '../config/load.ts';
import type { ConfigLayer, RuneConfig } from '../config/schema.ts';
import { type ErrorCode, EXIT_CODES, isRuneError, RuneError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { redact } from '../core/redact.ts';
import { resolveRunPolicy } from '../policy/project.ts';
import { credentialsFor } from '../providers/index.ts';
import { createSandboxExecutor } from '../sandbox/executor.ts';
import { formatLayerSummary } from '../sandbox/summary.ts';
import type { SandboxExecutor } from '../sandbox/types.ts';
import { buildUrl } from './build-url.ts';
import { requireTemporaryFolder } from './preflight.ts';
import { type Source, sourceSchema } from './schema.ts';

export type RunAgentFn = (options: AgentRunOptions) => Promise<AgentRunResult>;

export interface AgentDeps {
  runAgent: RunAgentFn;
  logger: Logger;
  env: NodeJS.ProcessEnv;
  /** A build-log line (already without the trailing newline). */
  log(line: string): void;
  /** Aborted when Concourse stops the step: the run ends and its tool processes are killed. */
  signal?: AbortSignal;
  /** The sandbox of the run's tools (default: the real one for the source's sandbox settings). */
  sandbox?: (config: RuneConfig) => SandboxExecutor;
}

// Every message about a setting names it as the pipeline author writes it: source.max_steps.
const SOURCE_KEYS = new Set(Object.keys(sourceSchema.shape));
const sourceLabel = (path: string): string | undefined =>
  SOURCE_KEYS.has(path.split('.')[0] ?? path) ? `source.${path}` : undefined;

export function configFromSource(source: Source): RuneConfig {
  const layer: ConfigLayer = {};
  if (source.api_key !== undefined) layer.api_key = source.api_key;
  if (source.provider !== undefined) layer.provider = source.provider;
  if (source.base_url !== undefined) layer.base_url = source.base_url;
  if (source.model !== undefined) layer.model = source.model;
  if (source.system_prompt !== undefined) layer.system_prompt = source.system_prompt;
  if (source.max_steps !== undefined) layer.max_steps = source.max_steps;
  if (source.token_budget !== undefined) layer.token_budget = source.token_budget;
  if (source.max_output_tokens !== undefined) layer.max_output_tokens = source.max_output_tokens;
  if (source.timeout_secs !== undefined) layer.timeout_secs = source.timeout_secs;
  if (source.policy !== undefined) layer.policy = source.policy;
  if (source.sandbox !== undefined) layer.sandbox = source.sandbox;
  const noFile = (): string => {
    throw Object.assign(new Error('no config file in Concourse mode'), { code: 'ENOENT' });
  };
  return loadConfig({ env: {}, flags: layer, flagLabels: sourceLabel, readFile: noFile }).config;
}

export interface PromptRun {
  step: 'check' | 'in' | 'out';
  source: Source;
  prompt: string;
  cwd: string;
  systemPrompt?: string;
  appendSystemPrompt?: string;
  readPaths?: string[];
}

/**
 * The MCP servers of `source.mcp`, started for one run and shut down after it. A remote server
 * asking for an OAuth login fails: a step cannot open a browser, so its token comes in the source.
 */
async function withMcp(
  source: Source,
  config: RuneConfig,
  deps: AgentDeps,
  cwd: string,
  executor: SandboxExecutor,
  run: (extra: Pick<AgentRunOptions, 'tools' | 'takeNotices'>) => Promise<AgentRunResult>,
): Promise<AgentRunResult> {
  if (!source.mcp || source.mcp.length === 0) return run({});
  // Loaded only when servers are configured: the SDK is not parsed on other steps.
  const { mcpForOneRun } = await import('../mcp/run-servers.ts');
  const mcp = await mcpForOneRun({
    config,
    servers: source.mcp.map((server) => ({ ...server, origin: 'source' as const })),
    logger: deps.logger,
    cwd,
    env: deps.env,
    executor,
    loginHint: (name) =>
      `a Concourse step cannot start an OAuth login (\`rune mcp login\` needs a browser): give source.mcp entry "${name}" a bearer_token from your credential manager, e.g. ((${name}_mcp_token))`,
  });
  try {
    return await run(mcp ? { tools: mcp.tools, takeNotices: mcp.takeNotices } : {});
  } finally {
    await mcp?.close();
  }
}

/** Runs the agent; anything but a final answer becomes the matching RuneError. */
export async function runPrompt(deps: AgentDeps, run: PromptRun): Promise<AgentRunResult> {
  // The run's policy, resolved for the step's folder: for `out` that is src, whose .rune/rune.toml
  // narrows the gate, the sandbox and the MCP servers as it does in the CLI.
  const config = resolveRunPolicy(configFromSource(run.source), run.cwd, deps.env, deps.logger);
  // The configuration first: a missing key or model is the step's whole story, not a line after
  // the sandbox summary.
  requireModelAndKey(config, deps.env);
  // Before the model is called: the sandbox needs a temporary folder, and the build log says once
  // which layers confine the tools (and why any is missing); strict mode stops here.
  requireTemporaryFolder(run.step);
  const executor = (deps.sandbox ?? defaultSandbox(deps))(config);
  for (const line of formatLayerSummary(executor.describe())) deps.log(`rune: ${line}`);
  requireStrictLayers(config, executor);
  const result = await withMcp(run.source, config, deps, run.cwd, executor, (extra) => {
    const options: AgentRunOptions = {
      prompt: run.prompt,
      config,
      cwd: run.cwd,
      env: deps.env,
      logger: deps.logger,
      executor,
      onEvent: (event) => logEvent(deps, event),
      // The build log shows no streamed text, so a model call broken midway can be retried.
      streamText: false,
      ...extra,
    };
    if (deps.signal) options.signal = deps.signal;
    if (run.systemPrompt !== undefined) options.systemPrompt = run.systemPrompt;
    if (run.appendSystemPrompt !== undefined) options.appendSystemPrompt = run.appendSystemPrompt;
    if (run.readPaths && run.readPaths.length > 0) options.readPaths = run.readPaths;
    return deps.runAgent(options);
  });
  if (result.status === 'FinalAnswer') return result;
  if (result.answer) deps.log(`rune: partial answer:\n${redact(result.answer)}`);
  throw failure(result);
}

/** The model and the provider's key (or a keyless base_url), as the run would resolve them. */
function requireModelAndKey(config: RuneConfig, env: NodeJS.ProcessEnv): void {
  if (!config.model) throw new RuneError('USAGE', inResourceTerms('no model is set'));
  try {
    credentialsFor(config, env);
  } catch (error) {
    if (isRuneError(error)) throw new RuneError(error.code, inResourceTerms(error.message), { cause: error });
    throw error;
  }
}

function defaultSandbox(deps: AgentDeps): (config: RuneConfig) => SandboxExecutor {
  return (config) => createSandboxExecutor({ config, logger: deps.logger, mode: config.sandbox.mode });
}

function failure(result: AgentRunResult): RuneError {
  switch (result.status) {
    case 'MaxSteps':
      return new RuneError(
        'MAX_STEPS',
        `the agent reached source.max_steps (${result.steps}) without a final answer`,
      );
    case 'TokenBudgetExhausted':
      return new RuneError('TOKEN_BUDGET', 'the agent used up source.token_budget without a final answer');
    case 'UserInterrupt':
      return new RuneError('TERMINATED', 'the agent run was interrupted');
    // The model's answer decided these (docs/adr/0033-run-outcomes.md): its code, in the run's words.
    case 'OutputLimit':
      return new RuneError('OUTPUT_LIMIT', inResourceTerms(result.error?.message));
    case 'Refused':
      return new RuneError('MODEL_REFUSED', inResourceTerms(result.error?.message));
    default: {
      const code = result.error?.code;
      const known = code !== undefined && code in EXIT_CODES ? (code as ErrorCode) : 'PROVIDER_ERROR';
      return new RuneError(known, `the agent run failed: ${inResourceTerms(result.error?.message)}`);
    }
  }
}

// The agent names the CLI's flags and rune.toml; a pipeline author sets the resource's source.
function inResourceTerms(message: string | undefined): string {
  if (message === undefined) return 'no reason given';
  if (message.startsWith('no API key and no base URL')) {
    return 'no API key and no base URL: set source.api_key (or source.base_url for a server that needs no key) in the resource';
  }
  const forProvider = /^no API key for ([^:]+):/.exec(message);
  if (forProvider) return `no API key for ${forProvider[1]}: set source.api_key in the resource`;
  if (message.startsWith('no model is set')) return 'no model is set: set source.model in the resource';
  return message;
}

/** A short, readable trace of the run for the build log. */
function logEvent(deps: AgentDeps, event: AgentEvent): void {
  if (deps.logger.verbose) deps.logger.debug('concourse.agent_event', { ...event });
  switch (event.type) {
    case 'run_start':
      deps.log(`rune: running ${event.model} (${event.provider})`);
      break;
    case 'tool_call':
      deps.log(`rune: → ${event.name} ${clip(event.arguments, 200)}`);
      break;
    case 'policy_decision':
      if (event.decision.kind !== 'allow') {
        deps.log(`rune:   blocked by ${event.decision.rule}: ${event.decision.reason}`);
      }
      break;
    case 'tool_result':
      if (event.isError) deps.log(`rune:   error: ${clip(event.content, 300)}`);
      break;
    case 'run_end':
      deps.log(`rune: ${event.status} after ${event.steps} step(s), ${event.usage.totalTokens} tokens`);
      break;
    default:
      break;
  }
}

function clip(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

/** The version ref of an answer. */
export function digestOf(answer: string): string {
  return `sha256:${createHash('sha256').update(answer, 'utf8').digest('hex')}`;
}

/** Metadata every step that ran the agent reports: strings only, as Concourse requires. */
export function runMetadata(
  result: AgentRunResult,
  env: NodeJS.ProcessEnv,
): { name: string; value: string }[] {
  const metadata = [
    { name: 'model', value: result.model },
    { name: 'stop_reason', value: result.status },
    { name: 'steps', value: String(result.steps) },
    { name: 'tokens', value: String(result.usage.totalTokens) },
    { name: 'input_tokens', value: String(result.usage.inputTokens) },
    { name: 'output_tokens', value: String(result.usage.outputTokens) },
    { name: 'tool_calls', value: String(result.toolCalls.length) },
  ];
  return [...metadata, ...buildMetadata(env)];
}

/** BUILD_* identify the build: they belong in metadata and never in a version. */
export function buildMetadata(env: NodeJS.ProcessEnv): { name: string; value: string }[] {
  const url = buildUrl(env);
  return url ? [{ name: 'build_url', value: url }] : [];
}
