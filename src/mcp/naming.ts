// Names: splitting a `--mcp-stdio "cmd args"` value into argv, naming a server from its command,
// and giving each MCP tool the name the model sees (first owner keeps a name; built-ins come first).
import { basename, extname } from 'node:path';
import { RuneError } from '../core/errors.ts';

/** Splits a command line like a POSIX shell does for words: quotes and backslashes, nothing else. */
export function splitCommandLine(text: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === '\\' && i + 1 < text.length && '"\\$`'.includes(text[i + 1] as string))
        word += text[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\') {
      if (i + 1 >= text.length) throw new RuneError('USAGE', `--mcp-stdio: trailing backslash in "${text}"`);
      word += text[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new RuneError('USAGE', `--mcp-stdio: unclosed ${quote} quote in "${text}"`);
  if (inWord) words.push(word);
  return words;
}

const INTERPRETERS = new Set([
  'node',
  'nodejs',
  'npx',
  'bun',
  'bunx',
  'deno',
  'python',
  'python3',
  'uv',
  'uvx',
  'pipx',
  'sh',
  'bash',
  'ruby',
  'java',
]);
const GENERIC_STEMS = new Set(['index', 'main', 'cli', 'server', 'run', 'start', 'dist', 'bin', 'src']);
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9_-]+$/;

export function sanitizeName(text: string): string {
  return text.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '');
}

/**
 * A server name from its argv: the program, or for interpreters (`node x.js`, `npx @scope/pkg`)
 * the script or package. `packageName(file)` looks up the package a generic script (index.js) is in.
 */
export function serverNameFromArgv(
  argv: readonly string[],
  packageName?: (file: string) => string | undefined,
): string {
  const [command = 'mcp', ...args] = argv;
  let subject = command;
  if (INTERPRETERS.has(basename(command))) {
    const positional = args.find((arg) => !arg.startsWith('-') && arg !== 'run' && arg !== 'exec');
    if (positional) subject = positional;
  }
  // Package specs: @scope/name@1.2.3 and name@1.2.3 → name.
  const scoped = /^@[^/\s]+\/([^@/\s]+)(?:@\S*)?$/.exec(subject);
  const versioned = /^([^@/\s]+)@\S+$/.exec(subject);
  let name = scoped?.[1] ?? versioned?.[1];
  if (!name) {
    const stem = basename(subject, extname(subject));
    name = GENERIC_STEMS.has(stem) ? (packageName?.(subject)?.split('/').pop() ?? stem) : stem;
  }
  return sanitizeName(name ?? '') || 'mcp';
}

/** Gives each server a unique name: a second `everything` becomes `everything-2`. */
export function uniqueNames(names: readonly string[], taken: Iterable<string> = []): string[] {
  const used = new Set(taken);
  return names.map((name) => {
    let candidate = name;
    for (let n = 2; used.has(candidate); n++) candidate = `${name}-${n}`;
    used.add(candidate);
    return candidate;
  });
}

// What every provider accepts as a function name (OpenAI's rule is the strictest).
const MODEL_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function modelToolName(name: string): string {
  if (MODEL_TOOL_NAME.test(name)) return name;
  return (sanitizeName(name) || 'tool').slice(0, 64);
}

export interface NamedTool {
  server: string;
  /** The name the server gave it (what tools/call is sent). */
  tool: string;
}

export interface NameAssignment<T extends NamedTool> {
  offered: Array<T & { name: string }>;
  /** Tools the model cannot see because an earlier owner has the name, with a warning each. */
  hidden: Array<T & { name: string; owner: string; warning: string }>;
}

/**
 * Offers every tool under the name its server gives it (made safe for the model's wire format);
 * a name already owned by a built-in or an earlier server stays with that owner.
 */
export function assignToolNames<T extends NamedTool>(
  reserved: readonly string[],
  tools: readonly T[],
): NameAssignment<T> {
  const owners = new Map<string, string>(reserved.map((name) => [name, 'built-in tool']));
  const result: NameAssignment<T> = { offered: [], hidden: [] };
  for (const tool of tools) {
    const name = modelToolName(tool.tool);
    const owner = owners.get(name);
    if (owner !== undefined) {
      result.hidden.push({
        ...tool,
        name,
        owner,
        warning: `MCP tool "${tool.tool}" of server "${tool.server}" is hidden: the name "${name}" belongs to the ${owner}`,
      });
      continue;
    }
    owners.set(name, `tool of MCP server "${tool.server}"`);
    result.offered.push({ ...tool, name });
  }
  return result;
}
