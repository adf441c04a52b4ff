// The tools offered to the model: the built-ins of the catalog plus extra tools (notes, MCP) that can
// be added and removed while a session runs. Arguments are parsed and validated here, so a bad call
// from the model becomes an error result it can read, never an exception in the run loop. A built-in
// tool's module is loaded when a call to it is first parsed (catalog.ts).
import type { z } from 'zod/v4';
import type { ToolAccess, ToolSource } from '../policy/types.ts';
import type { ToolDefinition } from '../providers/types.ts';
import { capText } from './cap.ts';
import { BUILTIN_CATALOG, type CatalogEntry } from './catalog.ts';
import { type BuiltinTool, type ExtraTool, type ToolContext, ToolError, type ToolOutput } from './types.ts';

export interface RegisteredTool {
  definition: ToolDefinition;
  source: ToolSource;
  server?: string;
  readOnly: boolean;
  /** Folders the tool's process may write besides the run's grants (an MCP server's). */
  writablePaths?: readonly string[];
  /** What a rune tool reaches (the policy judges it); absent for MCP tools. */
  access?: ToolAccess;
  /** Checks the model's arguments; the error text is what the model reads. */
  parse(raw: string): Promise<{ ok: true; args: Record<string, unknown> } | { ok: false; error: string }>;
  execute(args: Record<string, unknown>, context: ToolContext): Promise<ToolOutput>;
  preview?(args: Record<string, unknown>, context: ToolContext): Promise<string | undefined>;
}

export function parseJsonObject(
  raw: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  let value: unknown;
  try {
    value = raw.trim() === '' ? {} : JSON.parse(raw);
  } catch (error) {
    return { ok: false, error: `the arguments are not valid JSON (${(error as Error).message})` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, error: 'the arguments must be a JSON object' };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.map(String).join('.');
      if (issue.code === 'unrecognized_keys') return `unknown argument(s): ${issue.keys.join(', ')}`;
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join('; ');
}

function fromCatalog(entry: CatalogEntry): RegisteredTool {
  let loaded: Promise<BuiltinTool<Record<string, unknown>>> | undefined;
  const tool = (): Promise<BuiltinTool<Record<string, unknown>>> => {
    loaded ??= entry.load() as unknown as Promise<BuiltinTool<Record<string, unknown>>>;
    return loaded;
  };
  return {
    definition: entry.definition,
    source: 'builtin',
    readOnly: entry.readOnly,
    access: entry.access,
    async parse(raw) {
      const json = parseJsonObject(raw);
      if (!json.ok) return json;
      const result = (await tool()).schema.safeParse(json.value);
      if (!result.success) return { ok: false, error: `invalid arguments: ${describeIssues(result.error)}` };
      return { ok: true, args: result.data };
    },
    execute: async (args, context) => (await tool()).execute(args, context),
    // A tool without a preview answers undefined, which callers read as no preview.
    preview: async (args, context) => (await tool()).preview?.(args, context),
  };
}

function fromExtra(tool: ExtraTool): RegisteredTool {
  return {
    definition: tool.definition,
    source: tool.source,
    ...(tool.server === undefined ? {} : { server: tool.server }),
    ...(tool.writablePaths ? { writablePaths: tool.writablePaths } : {}),
    readOnly: tool.readOnly ?? false,
    ...(tool.access ? { access: tool.access } : {}),
    async parse(raw) {
      const json = parseJsonObject(raw);
      return json.ok ? { ok: true, args: json.value } : json;
    },
    execute: (args, context) => tool.execute(args, context.signal),
  };
}

export class ToolRegistry {
  readonly #tools = new Map<string, RegisteredTool>();

  constructor(extraTools: readonly ExtraTool[] = []) {
    for (const entry of BUILTIN_CATALOG) this.#tools.set(entry.definition.name, fromCatalog(entry));
    for (const tool of extraTools) this.add(tool);
  }

  /** Adds (or replaces) an extra tool, e.g. when an MCP server starts. */
  add(tool: ExtraTool): void {
    const existing = this.#tools.get(tool.definition.name);
    if (existing?.source === 'builtin' && tool.source === 'mcp') {
      // A server must not shadow a built-in tool and so slip past its checks.
      throw new ToolError(`an MCP tool cannot replace the built-in tool ${tool.definition.name}`);
    }
    this.#tools.set(tool.definition.name, fromExtra(tool));
  }

  /** Removes a tool, e.g. when its MCP server crashed. */
  remove(name: string): void {
    this.#tools.delete(name);
  }

  get(name: string): RegisteredTool | undefined {
    return this.#tools.get(name);
  }

  list(): RegisteredTool[] {
    return [...this.#tools.values()];
  }

  names(): string[] {
    return [...this.#tools.keys()];
  }
}

/** Runs a tool and turns every failure into a result: the run loop never sees an exception. */
export async function executeTool(
  tool: RegisteredTool,
  args: Record<string, unknown>,
  context: ToolContext,
): Promise<ToolOutput> {
  try {
    const output = await tool.execute(args, context);
    return { ...output, content: capText(output.content, undefined, 'the result') };
  } catch (error) {
    if (error instanceof ToolError) return { content: `error: ${error.message}`, isError: true };
    if (context.signal.aborted) return { content: 'error: cancelled', isError: true };
    return {
      content: `error: ${tool.definition.name} failed: ${(error as Error).message ?? error}`,
      isError: true,
    };
  }
}
