// The agent's command-line flags and how each maps onto the configuration layer (flags win over
// env and file). Values are passed through raw so the one schema judges them and names the flag.
import { type Command, Option } from 'commander';
import type { ConfigLayer } from '../config/schema.ts';

export interface AgentFlags {
  model?: string;
  provider?: string;
  baseUrl?: string;
  apiKey?: string;
  maxSteps?: string;
  tokenBudget?: string;
  maxOutputTokens?: string;
  timeout?: string;
  systemPrompt?: string;
  systemPromptFile?: string;
  unrestricted?: boolean;
  policy?: string;
  sandbox?: string;
  yes?: boolean;
  json?: boolean;
  output?: string;
  trace?: string;
  resume?: string | boolean;
  /** Pipe mode: record checkpoints of the run and print its session id (`rune undo ID`). */
  checkpoint?: boolean;
  verbose?: boolean;
  config?: string;
  /** `--mcp-stdio "cmd args"`, repeatable: stdio MCP servers for this run. */
  mcpStdio?: string[];
  /** `--mcp-http URL`, repeatable: remote MCP servers for this run. */
  mcpHttp?: string[];
  /** `--image PATH`, repeatable: images sent with the (first) prompt. */
  image?: string[];
}

/** Key path in the config → the flag that sets it, for error messages. */
export const FLAG_LABELS: Record<string, string> = {
  model: '--model',
  provider: '--provider',
  base_url: '--base-url',
  api_key: '--api-key',
  max_steps: '--max-steps',
  token_budget: '--token-budget',
  max_output_tokens: '--max-output-tokens',
  timeout_secs: '--timeout',
  'policy.mode': '--policy/--unrestricted',
  'sandbox.mode': '--sandbox',
  trace: '--trace',
  // Not a config key: how a person approves what confirm mode would ask, named in deny reasons.
  yes: '--yes',
};

export function addAgentOptions(program: Command): Command {
  return program
    .option('-m, --model <name>', 'model name sent to the provider')
    .option('--provider <name>', 'openai, openrouter, copilot, gemini or anthropic (default: from the key)')
    .option('--base-url <url>', 'endpoint of the provider (any OpenAI-compatible server)')
    .option('--api-key <key>', 'provider API key (prefer RUNE_API_KEY: flags show in `ps`)')
    .option('--max-steps <n>', 'model calls per run before it stops (exit 4)')
    .option('--token-budget <n>', 'tokens per run before it stops (exit 5)')
    .option('--max-output-tokens <n>', 'max_tokens of every model request')
    .option('--timeout <secs>', 'whole-run timeout in seconds (exit 10)')
    .option('--system-prompt <text>', 'replace the built-in system prompt')
    .option('--system-prompt-file <file>', 'replace the built-in system prompt with a file')
    .option('--unrestricted', 'skip the policy checks (the sandbox still applies)')
    .option('--policy <mode>', 'allowlist, confirm or unrestricted')
    .option('--sandbox <mode>', 'auto, strict or off')
    .option(
      '-y, --yes',
      'approve without asking what the lists do not cover (what confirm mode would ask), under the default allowlist too; the secrets floor and denied_paths still hold',
    )
    .option(
      '--json',
      'print one JSON object {answer, status, steps, usage, tool_calls, model, session_id, error} (snake_case keys)',
    )
    .addOption(
      new Option('--output <format>', 'text or ndjson (one event per line)').choices(['text', 'ndjson']),
    )
    .option('--trace <dir>', 'write a JSON trace of the run into this folder')
    .option(
      '--resume [id]',
      "continue a stored session: without an id a picker (the session) or this folder's last (pipe mode); an id (or its prefix) from `rune sessions`; a value that is not an id is the prompt",
    )
    .option(
      '--checkpoint',
      'pipe mode: record what the run changes and print its session id on stderr (rune undo ID reverts it)',
    )
    .option('-v, --verbose', 'diagnostics as NDJSON on stderr')
    .option('-c, --config <file>', 'configuration file (default: $RUNE_HOME/rune.toml)')
    .option(
      '--image <path>',
      "send an image (PNG, JPEG, GIF, WebP; up to 5 MiB) with the prompt, or the session's first prompt (repeatable)",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '--mcp-stdio <command>',
      'start a stdio MCP server for this run, e.g. "node server.js" (repeatable)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '--mcp-http <url>',
      'connect to a remote MCP server for this run (Streamable HTTP, else SSE); its host must be in allowed_domains (repeatable)',
      (value: string, previous: string[] = []) => [...previous, value],
    );
}

function number(value: string | undefined): number | string | undefined {
  if (value === undefined) return undefined;
  // "-3" and "1.5" become numbers too, so the schema says what is wrong with them, not "a string".
  return /^[-+]?\d+(\.\d+)?$/.test(value.trim()) ? Number(value.trim()) : value;
}

/** The flags as a config layer; anything wrongly typed stays as given so the schema reports it. */
export function flagsToLayer(flags: AgentFlags): ConfigLayer {
  const layer: Record<string, unknown> = {
    model: flags.model,
    provider: flags.provider,
    base_url: flags.baseUrl,
    api_key: flags.apiKey,
    max_steps: number(flags.maxSteps),
    token_budget: number(flags.tokenBudget),
    max_output_tokens: number(flags.maxOutputTokens),
    timeout_secs: number(flags.timeout),
    trace: flags.trace,
  };
  const mode = flags.unrestricted ? 'unrestricted' : flags.policy;
  if (mode !== undefined) layer.policy = { mode };
  if (flags.sandbox !== undefined) layer.sandbox = { mode: flags.sandbox };
  for (const key of Object.keys(layer)) if (layer[key] === undefined) delete layer[key];
  return layer as ConfigLayer;
}
