// The mount's tree, from the tools on offer: `tools/<tool>` for each built-in, `tools/<server>/<tool>`
// for each MCP tool (the server's own name for it), a `.log` beside each, and a README listing them
// with their input. Pure; inode numbers stay the same for a path across rebuilds (InodeTable).
import type { RegisteredTool } from '../tools/registry.ts';
import { plainArgument } from './input.ts';
import type { FuseNode } from './native.ts';

/** A tool as the tree sees it: its registry name, and the MCP server and tool name when it has one. */
export interface OfferedTool {
  definition: RegisteredTool['definition'];
  server?: string;
  /** The server's own name for the tool (the registry's may carry a prefix). */
  serverTool?: string;
}

export type Endpoint = { path: string; tool: string; kind: 'call' | 'log' };

export interface Tree {
  nodes: FuseNode[];
  /** The dynamic files, by inode. */
  endpoints: Map<number, Endpoint>;
  readme: string;
  /** Tools left out, with the reason (a name that is not a file name, or is taken). */
  skipped: string[];
}

export const ROOT_INO = 1;
const DIR_MODE = 0o500;
const CALL_MODE = 0o600;
const READ_MODE = 0o400;

/** Inode numbers by path: a path keeps its number while the mount lives, a new path gets a new one. */
export class InodeTable {
  readonly #inodes = new Map<string, number>([['', ROOT_INO]]);
  #next = ROOT_INO + 1;

  of(path: string): number {
    let ino = this.#inodes.get(path);
    if (ino === undefined) {
      ino = this.#next++;
      this.#inodes.set(path, ino);
    }
    return ino;
  }
}

/** A name usable as a file name beside its `.log` companion. */
function nameProblem(name: string): string | undefined {
  const quoted = JSON.stringify(name);
  if (name === '' || name === '.' || name === '..') return `the name ${quoted} is not a file name`;
  if (/[/\0]/.test(name)) return `the name ${quoted} holds "/" or NUL`;
  if (name.endsWith('.log')) return `the name ${quoted} ends in .log, the name of a log companion`;
  return undefined;
}

export function buildTree(tools: readonly OfferedTool[], inodes: InodeTable): Tree {
  const nodes: FuseNode[] = [{ ino: ROOT_INO, parent: ROOT_INO, name: '', dir: true, mode: DIR_MODE }];
  const endpoints = new Map<number, Endpoint>();
  const skipped: string[] = [];
  const taken = new Set<string>();
  const dir = (path: string, parent: string, name: string) => {
    if (taken.has(path)) return;
    taken.add(path);
    nodes.push({ ino: inodes.of(path), parent: inodes.of(parent), name, dir: true, mode: DIR_MODE });
  };
  const listed: Array<{ path: string; tool: OfferedTool }> = [];
  dir('tools', '', 'tools');
  const builtins = tools.filter((tool) => tool.server === undefined);
  const mcp = tools.filter((tool) => tool.server !== undefined);
  for (const tool of [...builtins, ...mcp]) {
    const name = tool.serverTool ?? tool.definition.name;
    const folder = tool.server === undefined ? 'tools' : `tools/${tool.server}`;
    const path = `${folder}/${name}`;
    const problem =
      nameProblem(name) ??
      (taken.has(path) || taken.has(`${path}.log`) ? 'the path is taken' : undefined) ??
      (tool.server !== undefined && endpointAt(taken, folder) ? `its folder ${folder} is a tool` : undefined);
    if (problem) {
      skipped.push(`${path}: ${problem}; the tool is not in the mount`);
      continue;
    }
    if (tool.server !== undefined) dir(folder, 'tools', tool.server);
    for (const [file, kind, mode] of [
      [path, 'call', CALL_MODE],
      [`${path}.log`, 'log', READ_MODE],
    ] as const) {
      taken.add(file);
      const ino = inodes.of(file);
      nodes.push({ ino, parent: inodes.of(folder), name: file.slice(folder.length + 1), dir: false, mode });
      endpoints.set(ino, { path: file, tool: tool.definition.name, kind });
    }
    listed.push({ path, tool });
  }
  const readme = readmeText(listed, skipped);
  nodes.push({
    ino: inodes.of('README'),
    parent: ROOT_INO,
    name: 'README',
    dir: false,
    mode: READ_MODE,
    content: Buffer.from(readme),
  });
  return { nodes, endpoints, readme, skipped };
}

function endpointAt(taken: Set<string>, path: string): boolean {
  return taken.has(path) && taken.has(`${path}.log`);
}

const USAGE = `rune mount: rune's tools as files. Every call passes rune's policy (and its audit log) and
every process it starts runs in rune's sandbox, as a model's tool call does.

Call a tool: write its arguments, then read the result, from the same shell (session):
  echo '{"path":"README.md"}' > tools/read_file; cat tools/read_file
A tool with one required text argument also takes the text itself:
  echo 'ls -la' > tools/execute_cmd; cat tools/execute_cmd
What the last call of this session did (decision, sandbox layers, duration, exit status, stderr):
  cat tools/execute_cmd.log
Shells with different session ids never see each other's results (setsid gives a new one).
A call the policy refuses reads back its reason and then the read fails (EACCES); input the tool
cannot take fails with EINVAL, a call that failed with EIO, after its text.
`;

function readmeText(
  listed: ReadonlyArray<{ path: string; tool: OfferedTool }>,
  skipped: readonly string[],
): string {
  const sections = listed.map(({ path, tool }) => {
    const parameters = tool.definition.parameters;
    const plain = plainArgument(parameters);
    const origin = tool.server === undefined ? 'built-in' : `MCP server ${tool.server}`;
    return [
      `## ${path} (${origin})`,
      tool.definition.description.trim(),
      `input: a JSON object${plain ? `, or the text of "${plain}"` : ''}; its schema:`,
      JSON.stringify(parameters, null, 2),
    ].join('\n');
  });
  const left = skipped.length > 0 ? `\n## Not in the mount\n${skipped.join('\n')}\n` : '';
  return `${USAGE}\n${sections.join('\n\n')}\n${left}`;
}
