// Test support for the tools: a ToolContext with the real secrets floor for a given home folder,
// and a call through the registry (argument checks and result cap included), as the run loop does.
import { DEFAULTS, type RuneConfig } from '../config/schema.ts';
import { protectedPathsFor } from '../policy/gate.ts';
import type { SandboxExecutor } from '../sandbox/types.ts';
import { executeTool, ToolRegistry } from './registry.ts';
import type { ToolContext, ToolOutput } from './types.ts';

export function toolContext(
  cwd: string,
  home: string,
  policy: Partial<RuneConfig['policy']> = {},
  overrides: Partial<ToolContext> = {},
): ToolContext {
  const config = {
    ...(DEFAULTS as unknown as RuneConfig),
    policy: { ...DEFAULTS.policy, ...policy },
  } as RuneConfig;
  const env = { HOME: home, RUNE_HOME: `${home}/.rune` };
  return {
    cwd,
    config,
    executor: {} as SandboxExecutor,
    env,
    readOnlyPaths: [cwd],
    readWritePaths: [],
    protectedPaths: protectedPathsFor(config, cwd, env),
    signal: new AbortController().signal,
    ...overrides,
  };
}

const registry = new ToolRegistry();

export async function callTool(
  name: string,
  args: Record<string, unknown>,
  context: ToolContext,
): Promise<ToolOutput> {
  const tool = registry.get(name);
  if (!tool) throw new Error(`no tool ${name}`);
  const parsed = await tool.parse(JSON.stringify(args));
  if (!parsed.ok) return { content: parsed.error, isError: true };
  return executeTool(tool, parsed.args, context);
}
