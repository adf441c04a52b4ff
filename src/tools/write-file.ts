// write_file: replaces a file atomically (a temporary file in the same folder, then rename), so a
// reader never sees half a file and a failed write leaves the old one intact.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod/v4';
import { resolveToolPath } from './paths.ts';
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
  access: { kind: 'write', verb: 'Write' },
  async execute(args, context) {
    const path = resolveToolPath(args.path, context.cwd, context.env.HOME);
    const existing = await stat(path).catch(() => undefined);
    if (existing?.isDirectory()) throw new ToolError(`${path} is a directory`);
    const dir = dirname(path);
    await mkdir(dir, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
      throw new ToolError(`cannot create folder ${dir}: ${error.code ?? error.message}`);
    });
    const tmp = join(dir, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      await writeFile(tmp, args.content, { encoding: 'utf8', flag: 'wx', mode: 0o644 });
      // Keep the permissions of the file being replaced (an executable script stays executable).
      if (existing) await chmod(tmp, existing.mode & 0o7777);
      await rename(tmp, path);
    } catch (error) {
      await unlink(tmp).catch(() => {});
      throw new ToolError(`cannot write ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`);
    }
    const bytes = Buffer.byteLength(args.content, 'utf8');
    return { content: `wrote ${bytes} bytes to ${path}` };
  },
});
