// list_dir: the entries of one folder, sorted, folders marked with a slash, with file sizes. The
// folder is opened through no link and listed by descriptor; each size is an lstat in it.
import { z } from 'zod/v4';
import type { Root } from '../core/fd/index.ts';
import { toolFsError, toolTarget } from './target.ts';
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
    const target = toolTarget(args.path, context);
    const path = target.shown;
    let dir: Root;
    try {
      const st = target.root.stat(target.rel);
      if (!st) throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
      if (st.kind !== 'dir') throw new ToolError(`${path} is not a folder; use read_file`);
      dir = target.root.openDir(target.rel);
    } catch (error) {
      throw toolFsError('list', path, error);
    }
    try {
      const entries = dir.list();
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      const lines: string[] = [];
      for (const entry of entries.slice(0, MAX_ENTRIES)) {
        if (entry.kind === 'dir') lines.push(`${entry.name}/`);
        else if (entry.kind === 'symlink') lines.push(`${entry.name}@`);
        else if (entry.kind === 'file') {
          const size = sizeOf(dir, entry.name);
          lines.push(size === undefined ? entry.name : `${entry.name}  (${size} bytes)`);
        } else lines.push(`${entry.name}  (special file)`);
      }
      if (entries.length === 0) lines.push('(empty folder)');
      if (entries.length > MAX_ENTRIES) {
        lines.push(`[truncated: ${entries.length} entries, only the first ${MAX_ENTRIES} are shown]`);
      }
      return { content: lines.join('\n') };
    } catch (error) {
      throw toolFsError('list', path, error);
    } finally {
      dir.close();
    }
  },
});

function sizeOf(dir: Root, name: string): number | undefined {
  try {
    return dir.stat(name)?.size;
  } catch {
    return undefined;
  }
}
