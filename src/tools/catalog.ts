// The built-in tools as the model sees them (name, description, JSON Schema of the arguments) and
// how to load each one. A run offers every tool in its first request but may call none, so a tool's
// module — its zod schema and what it imports (the diff library, the folder walk, the HTML
// converter) — is loaded when a call to it is first checked. definitions.json is what the tool
// modules declare, derived from their zod schemas; catalog.test.ts fails when the two disagree
// (regenerate it with `npx vitest run src/tools/catalog.test.ts --update`).
import type { ToolAccess } from '../policy/types.ts';
import type { ToolDefinition } from '../providers/types.ts';
import definitions from './definitions.json' with { type: 'json' };
import type { BuiltinTool } from './types.ts';

export interface CatalogEntry {
  definition: ToolDefinition;
  readOnly: boolean;
  access: ToolAccess;
  load(): Promise<BuiltinTool<never>>;
}

type Loader = () => Promise<BuiltinTool<never>>;
const as = (tool: unknown) => tool as BuiltinTool<never>;

/** In the order the model is offered them. */
const LOADERS: Record<string, Loader> = {
  read_file: async () => as((await import('./read-file.ts')).readFileTool),
  write_file: async () => as((await import('./write-file.ts')).writeFileTool),
  edit_file: async () => as((await import('./edit-file.ts')).editFileTool),
  list_dir: async () => as((await import('./list-dir.ts')).listDirTool),
  search_files: async () => as((await import('./search-files.ts')).searchFilesTool),
  find_files: async () => as((await import('./find-files.ts')).findFilesTool),
  execute_cmd: async () => as((await import('./execute-cmd.ts')).executeCmdTool),
  fetch_url: async () => as((await import('./fetch-url.ts')).fetchUrlTool),
  inspect_process: async () => as((await import('./inspect-process.ts')).inspectProcessTool),
};

interface StoredDefinition extends ToolDefinition {
  readOnly: boolean;
  access: ToolAccess;
}

export const BUILTIN_CATALOG: readonly CatalogEntry[] = (definitions as StoredDefinition[]).map(
  ({ readOnly, access, ...definition }) => {
    const load = LOADERS[definition.name];
    if (!load) throw new Error(`definitions.json names ${definition.name}, which has no loader`);
    return { definition, readOnly, access, load };
  },
);

/** The names of the built-in tools, which no MCP tool may take. */
export const BUILTIN_TOOL_NAMES: readonly string[] = BUILTIN_CATALOG.map((entry) => entry.definition.name);

/** Every loader, for the test that compares the tool modules with definitions.json. */
export const BUILTIN_LOADERS: Readonly<Record<string, Loader>> = LOADERS;
