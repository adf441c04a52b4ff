// list_dir: the entries of one folder, sorted, folders marked with a slash, with file sizes.
import { lstat, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod/v4';
import { resolveToolPath } from './paths.ts';
import { defineTool, ToolError } from './types.ts';

const MAX_ENTRIES = 1000;

const schema = z.strictObject({
  path: z.string().min(1).describe('Folder to list, absolute or relative to the working directory'),
});

export const listDirTool = defineTool<z.infer<typeof schema>>({
  name: 'list_dir',
  description:
    'List a folder: one entry per line, folders end with "/", symbolic links end with "@", files their size.',
  schema,
  readOnly: true,
  access: { kind: 'read', target: 'folder' },
  async execute(args, context) {
    const path = resolveToolPath(args.path, context.cwd, context.env.HOME);
    const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
      throw new ToolError(`cannot list ${path}: ${error.code ?? error.message}`);
    });
    if (!info.isDirectory()) throw new ToolError(`${path} is not a folder; use read_file`);
    const entries = await readdir(path, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
      throw new ToolError(`cannot list ${path}: ${error.code ?? error.message}`);
    });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const lines: string[] = [];
    for (const entry of entries.slice(0, MAX_ENTRIES)) {
      if (entry.isDirectory()) lines.push(`${entry.name}/`);
      else if (entry.isSymbolicLink()) lines.push(`${entry.name}@`);
      else if (entry.isFile()) {
        const size = await lstat(join(path, entry.name)).then(
          (s) => s.size,
          () => undefined,
        );
        lines.push(size === undefined ? entry.name : `${entry.name}  (${size} bytes)`);
      } else lines.push(`${entry.name}  (special file)`);
    }
    if (entries.length === 0) lines.push('(empty folder)');
    if (entries.length > MAX_ENTRIES) {
      lines.push(`[truncated: ${entries.length} entries, only the first ${MAX_ENTRIES} are shown]`);
    }
    return { content: lines.join('\n') };
  },
});
