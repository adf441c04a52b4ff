// What a built-in tool is to the run loop: a JSON Schema for the model, a zod schema that checks
// the model's arguments, and an execute function that never throws for bad input.
import type { z } from 'zod/v4';
import type { RuneConfig } from '../config/schema.ts';
import { z as zod } from '../config/schema-kit.ts';
import type { Grants } from '../core/fd/index.ts';
import type { ProtectedPaths, ToolAccess } from '../policy/types.ts';
import type { ToolDefinition } from '../providers/types.ts';
import type { LayerReport, SandboxExecutor } from '../sandbox/types.ts';

export interface ToolContext {
  cwd: string;
  config: RuneConfig;
  executor: SandboxExecutor;
  /** The environment handed to tool processes, secrets already removed. */
  env: Record<string, string>;
  /** Folders and files the sandbox lets a tool process read, and read and write. */
  readOnlyPaths: string[];
  readWritePaths: string[];
  /** What in-process tools re-check per entry or at use: the floor and denied_paths. */
  protectedPaths: ProtectedPaths;
  /** The run's grants, pinned at its start (src/core/fd/grants.ts); the file tools resolve below them. */
  grants?: Grants;
  /** Lexical absolute path → the canonical path the policy judged this call by (src/tools/target.ts). */
  judged?: Readonly<Record<string, string>>;
  signal: AbortSignal;
  /** Injected so tests can point name resolution at fixed answers. */
  lookup?: LookupFn;
  /** fetch_url's deadline in ms (default FETCH_TIMEOUT_MS); injected so tests need not wait 20 s. */
  fetchTimeoutMs?: number;
}

export type LookupFn = (host: string) => Promise<{ address: string; family: 4 | 6 }[]>;

export interface ToolOutput {
  content: string;
  isError?: boolean;
  layers?: LayerReport[];
  /** For the person, not the model: the unified diff of a file the call changed. */
  diff?: string;
}

export interface BuiltinTool<Args = Record<string, unknown>> {
  definition: ToolDefinition;
  schema: z.ZodType<Args>;
  /** Read tools may run in parallel with each other; the others run one at a time, in order. */
  readOnly: boolean;
  /** What its arguments reach, which the policy judges (src/policy/decide.ts). */
  access: ToolAccess;
  execute(args: Args, context: ToolContext): Promise<ToolOutput>;
  /** What the call would change, shown to a person asked to confirm it (a diff). */
  preview?(args: Args, context: ToolContext): Promise<string | undefined>;
}

/** Thrown inside a tool for an error the model should read; the registry turns it into a result. */
export class ToolError extends Error {
  override name = 'ToolError';
}

/** Builds a tool whose JSON Schema is derived from its zod schema, so the two never disagree. */
export function defineTool<Args>(spec: {
  name: string;
  description: string;
  schema: z.ZodType<Args>;
  readOnly: boolean;
  access: ToolAccess;
  execute(args: Args, context: ToolContext): Promise<ToolOutput>;
  preview?(args: Args, context: ToolContext): Promise<string | undefined>;
}): BuiltinTool<Args> {
  // Derived on first use: converting every schema at start-up costs a run that calls no tool. zod
  // through schema-kit, loaded then: this module is on every cli start (the registry's ToolError).
  let parameters: Record<string, unknown> | undefined;
  return {
    definition: {
      name: spec.name,
      description: spec.description,
      get parameters() {
        if (!parameters) {
          const { $schema: _ignored, ...rest } = zod().toJSONSchema(spec.schema) as Record<string, unknown>;
          parameters = rest;
        }
        return parameters;
      },
    },
    schema: spec.schema,
    readOnly: spec.readOnly,
    access: spec.access,
    execute: spec.execute,
    ...(spec.preview ? { preview: spec.preview } : {}),
  };
}

/** A tool offered to the model beyond the built-ins (notes tools, MCP tools). */
export interface ExtraTool {
  definition: ToolDefinition;
  source: 'builtin' | 'mcp';
  server?: string;
  readOnly?: boolean;
  /** Folders the tool's process may write (an MCP server's allowed_paths_rw): what a checkpoint keeps. */
  writablePaths?: readonly string[];
  /** What a rune tool (source `builtin`) reaches; an MCP tool has none (the policy judges it by name). */
  access?: ToolAccess;
  execute(
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<{ content: string; isError?: boolean }>;
}
