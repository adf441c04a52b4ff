// write_file: replaces a file atomically (a temporary file in the same folder, fsynced, then renamed
// over it inside that folder, opened through no link), so a reader never sees half a file, a failed
// write leaves the old one intact, and a link or FIFO at the path is refused, never written through.

import { basename, dirname, join } from 'node:path';
import { z } from 'zod/v4';
import { Root, replaceFile } from '../core/fd/index.ts';
import { canonicalise } from '../core/paths.ts';
import { type ToolTarget, toolFsError, toolTarget } from './target.ts';
import { defineTool, type ToolContext, ToolError } from './types.ts';
import { unifiedDiff } from './unified-diff.ts';

const schema = z.strictObject({
  path: z.string().min(1).describe('File to write, absolute or relative to the working directory'),
  content: z.string().describe('The complete new content of the file'),
});

/** Past this size the old text is not read for a diff. */
const DIFF_MAX_BYTES = 4 * 1024 * 1024;

/**
 * The file's text now, for the diff a person sees ('' when it does not exist). Read through
 * src/core/fd (no link, no FIFO blocked on); anything but a regular text file of a bounded size
 * gives no diff (undefined).
 */
function currentText({ root, rel }: Pick<ToolTarget, 'root' | 'rel'>): string | undefined {
  const entry = root.stat(rel);
  if (!entry) return '';
  if (entry.kind !== 'file' || entry.size > DIFF_MAX_BYTES) return undefined;
  const { bytes, cut } = root.readFile(rel, DIFF_MAX_BYTES);
  if (cut) return undefined;
  const text = bytes.toString('utf8');
  return text.includes('\0') ? undefined : text;
}

function diffOf(args: { path: string; content: string }, context: ToolContext, maxBytes?: number) {
  let before: string | undefined;
  try {
    const target = toolTarget(args.path, context);
    // A link at the name gives no diff: the person is shown what the name holds, never a target's
    // text (a preview comes before the policy has judged where the link leads).
    const atName = join(canonicalise(dirname(target.shown)), basename(target.shown));
    before = Root.system().stat(atName.slice(1))?.kind === 'symlink' ? undefined : currentText(target);
  } catch {
    before = undefined;
  }
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
    // What the person sees in the transcript; the model reads only the one-line result.
    const diff = diffOf(args, context, 64 * 1024);
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
    return { content: `wrote ${bytes} bytes to ${path}`, ...(diff ? { diff: diff.text } : {}) };
  },
  async preview(args, context) {
    return diffOf(args, context, 16 * 1024)?.text;
  },
});
