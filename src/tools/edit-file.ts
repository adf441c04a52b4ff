// edit_file: exact string replacements in one file, applied in order, all or nothing, written
// atomically (a temporary file in the same folder, fsync, rename, fsync of the folder) with the
// file's mode, byte-order mark and line endings kept. The result and the confirm-mode preview are a
// unified diff. The policy judged the path before the call; the real path is checked again here
// against the floor and denied_paths, by name and by identity (a hard link to a key is refused).

import { z } from 'zod/v4';
import { type Entry, isPathRefused, type Root, readAll, replaceFile } from '../core/fd/index.ts';
import { realPath } from '../core/paths.ts';
import { applyEdits, type Edit, joinText, splitText } from './edit-apply.ts';
import { looksBinary } from './read-file.ts';
import { shownPath } from './search-files.ts';
import { toolFsError, toolTarget } from './target.ts';
import { defineTool, type ToolContext, ToolError } from './types.ts';
import { unifiedDiff } from './unified-diff.ts';
import { PathGuard } from './walk/guard.ts';

/** Files larger than this are not edited (say so; write_file can still replace them). */
export const MAX_EDIT_BYTES = 4 * 1024 * 1024;

const editSchema = z.strictObject({
  old_string: z
    .string()
    .describe('The exact text to replace, including indentation; enough lines to be unique'),
  new_string: z.string().describe('The text to put in its place'),
  replace_all: z.boolean().optional().describe('Replace every occurrence instead of requiring exactly one'),
});

const schema = z.strictObject({
  path: z.string().min(1).describe('File to edit, absolute or relative to the working directory'),
  edits: z
    .array(editSchema)
    .min(1)
    .max(100)
    .describe('Replacements applied in order, each to the result of the one before; all or nothing'),
});

export type EditFileArgs = z.infer<typeof schema>;

interface Planned {
  /** The real path written (the canonical path the policy judged). */
  path: string;
  root: Root;
  rel: string;
  shown: string;
  before: string;
  after: string;
  /** The bytes to write. */
  bytes: Buffer;
  existing?: Entry;
  replacements: number;
}

/** A new file: one edit with an empty old_string and a path that does not exist yet. */
function creation(args: EditFileArgs): string | undefined {
  const [first] = args.edits;
  return args.edits.length === 1 && first?.old_string === '' ? first.new_string : undefined;
}

function readExisting(root: Root, rel: string, path: string, guard: PathGuard): { raw: string; st: Entry } {
  let opened: ReturnType<Root['openFile']>;
  try {
    opened = root.openFile(rel);
  } catch (error) {
    if (isPathRefused(error) && error.kind === 'dir') throw new ToolError(`${path} is a folder`);
    throw toolFsError('open', path, error);
  }
  try {
    const st = opened.entry;
    const identity = guard.identityRefusal({ ...st, isDirectory: () => false });
    if (identity) throw new ToolError(`${path} is ${identity}; it is protected and cannot be edited`);
    if (st.size > MAX_EDIT_BYTES) {
      throw new ToolError(
        `${path} is ${st.size} bytes, over edit_file's ${MAX_EDIT_BYTES / 2 ** 20} MiB limit; use write_file to replace it`,
      );
    }
    const bytes = readAll(opened.fd, st.size).bytes;
    if (looksBinary(bytes)) {
      throw new ToolError(`${path} is a binary file (or not UTF-8 text); edit_file only edits text files`);
    }
    return { raw: bytes.toString('utf8'), st };
  } finally {
    root.sys.close(opened.fd);
  }
}

/** Everything up to the write: the real path, its checks, the new text and the diff. */
function plan(args: EditFileArgs, context: ToolContext): Planned {
  const { root, rel, real: path, shown: lexical } = toolTarget(args.path, context);
  let existing: Entry | undefined;
  try {
    existing = root.stat(rel);
  } catch (error) {
    throw toolFsError('open', lexical, error);
  }
  if (!existing && creation(args) === undefined) {
    throw new ToolError(
      `${lexical} does not exist; to create it, pass one edit with an empty old_string, or use write_file`,
    );
  }
  // Built for this path: under --unrestricted the protected entry that holds it is lifted, as the
  // policy lifted it; everything else stays protected (a hard link to another key, say).
  const guard = new PathGuard(context.protectedPaths, path);
  const refused = guard.refusal(path);
  if (refused) throw new ToolError(`${path} is inside ${refused}; it cannot be edited`);
  const shown = shownPath(path, realPath(context.cwd));

  const created = creation(args);
  let before = '';
  let after: string;
  let bytes: Buffer;
  let replacements = 1;
  if (existing) {
    const read = readExisting(root, rel, path, guard);
    existing = read.st;
    const form = splitText(read.raw);
    const outcome = applyEdits(form.text, args.edits as Edit[], form.eol);
    if (!outcome.ok) throw new ToolError(`${shown}: ${outcome.message}. Nothing was changed.`);
    before = form.text;
    after = outcome.text;
    bytes = Buffer.from(joinText(form, outcome.text), 'utf8');
    replacements = outcome.replacements;
  } else {
    after = created ?? '';
    bytes = Buffer.from(after, 'utf8');
  }
  if (bytes.length > MAX_EDIT_BYTES) {
    throw new ToolError(
      `the edited file would be ${bytes.length} bytes, over the ${MAX_EDIT_BYTES / 2 ** 20} MiB limit`,
    );
  }
  return { path, root, rel, shown, before, after, bytes, ...(existing ? { existing } : {}), replacements };
}

/**
 * Writes `bytes` in place of the file (src/core/fd: a temporary file beside it, fsynced, renamed
 * over it in its folder, the folder fsynced), so a crash leaves the old file or the new one, never
 * half of either; a file someone else wrote since it was read is not replaced.
 */
function writeAtomically(planned: Planned): void {
  const { root, rel, bytes, existing, path } = planned;
  try {
    replaceFile(root, rel, bytes, {
      parents: !existing,
      ...(existing ? { unchanged: existing } : {}),
    });
  } catch (error) {
    if (isPathRefused(error) && error.reason === 'changed') {
      throw new ToolError(`${planned.shown} changed while it was being edited; read it again and retry`);
    }
    throw toolFsError('write', path, error);
  }
}

export const editFileTool = defineTool<EditFileArgs>({
  name: 'edit_file',
  description:
    'Edit a text file in place by exact string replacement: each old_string must match exactly once (copy it from the file, with its indentation) unless replace_all is set. Edits apply in order; if any fails, nothing changes and the error shows the closest lines. Keeps line endings, byte-order mark and permissions. Returns a diff. One edit with an empty old_string creates a new file.',
  schema,
  readOnly: false,
  access: { kind: 'write', verb: 'Edit' },
  async execute(args, context) {
    const planned = plan(args, context);
    writeAtomically(planned);
    const diff = unifiedDiff(planned.shown, planned.before, planned.after);
    const what = planned.existing
      ? `edited ${planned.shown}: ${planned.replacements} replacement${planned.replacements === 1 ? '' : 's'}, +${diff.added} -${diff.removed} lines`
      : `created ${planned.shown} (${planned.bytes.length} bytes)`;
    return { content: `${what}\n${diff.text}`, diff: diff.text };
  },
  async preview(args, context) {
    try {
      const planned = plan(args, context);
      return unifiedDiff(planned.shown, planned.before, planned.after, 16 * 1024).text;
    } catch (error) {
      return `(the edit cannot be applied: ${(error as Error).message})`;
    }
  },
});
