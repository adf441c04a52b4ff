// write_file: replaces a file atomically (a temporary file in the same folder, fsynced, then renamed
// over it inside that folder, opened through no link), so a reader never sees half a file, a failed
// write leaves the old one intact, and a link or FIFO at the path is refused, never written through.
import { z } from 'zod/v4';
import { replaceFile } from '../core/fd/index.ts';
import { toolFsError, toolTarget } from './target.ts';
import { defineTool, ToolError } from './types.ts';

const schema = z.strictObject({
  path: z.string().min(1).describe('File to write, absolute or relative to the working directory'),
  content: z.string().describe('The complete new content of the file'),
});

export const writeFileTool = defineTool<z.infer<typeof schema>>({
  name: 'write_file',
  description:
    'Create or replace a file with the given content (atomically). Missing parent folders are created.',
  schema,
  readOnly: false,
  async execute(args, context) {
    const { root, rel, shown: path } = toolTarget(args.path, context);
    let existing: ReturnType<typeof root.stat>;
    try {
      existing = root.stat(rel);
    } catch (error) {
      throw toolFsError('write', path, error);
    }
    if (existing?.kind === 'dir') throw new ToolError(`${path} is a directory`);
    try {
      // The permissions of the file replaced are kept (an executable script stays executable).
      replaceFile(root, rel, args.content, { parents: true });
    } catch (error) {
      throw toolFsError('write', path, error);
    }
    const bytes = Buffer.byteLength(args.content, 'utf8');
    return { content: `wrote ${bytes} bytes to ${path}` };
  },
});
