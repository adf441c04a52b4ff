// write_file: replaces a file atomically (a temporary file in the same folder, then rename), so a
// reader never sees half a file and a failed write leaves the old one intact.
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, mkdir, open, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod/v4';
import { resolveToolPath } from './paths.ts';
import { defineTool, type ToolContext, ToolError } from './types.ts';
import { unifiedDiff } from './unified-diff.ts';

const schema = z.strictObject({
  path: z.string().min(1).describe('File to write, absolute or relative to the working directory'),
  content: z.string().describe('The complete new content of the file'),
});

/** Past this size the old text is not read for a diff. */
const DIFF_MAX_BYTES = 4 * 1024 * 1024;

/**
 * The file's text now, for the diff a person sees ('' when it does not exist). Opened without
 * following a final symlink and without blocking on a FIFO; anything but a regular text file of a
 * bounded size gives no diff (undefined).
 */
async function currentText(path: string): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? '' : undefined;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size > DIFF_MAX_BYTES) return undefined;
    const text = (await handle.readFile()).toString('utf8');
    return text.includes('\0') ? undefined : text;
  } finally {
    await handle.close();
  }
}

async function diffOf(args: { path: string; content: string }, context: ToolContext, maxBytes?: number) {
  const path = resolveToolPath(args.path, context.cwd, context.env.HOME);
  const before = await currentText(path).catch(() => undefined);
  return before === undefined ? undefined : unifiedDiff(args.path, before, args.content, maxBytes);
}

export const writeFileTool = defineTool<z.infer<typeof schema>>({
  name: 'write_file',
  description:
    'Create or replace a file with the given content (atomically). Missing parent folders are created.',
  schema,
  readOnly: false,
  access: { kind: 'write', verb: 'Write' },
  async execute(args, context) {
    const path = resolveToolPath(args.path, context.cwd, context.env.HOME);
    // What the person sees in the transcript; the model reads only the one-line result.
    const diff = await diffOf(args, context, 64 * 1024);
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
    return { content: `wrote ${bytes} bytes to ${path}`, ...(diff ? { diff: diff.text } : {}) };
  },
  async preview(args, context) {
    return (await diffOf(args, context, 16 * 1024))?.text;
  },
});
