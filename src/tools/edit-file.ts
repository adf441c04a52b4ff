// edit_file: exact string replacements in one file, applied in order, all or nothing, written
// atomically (a temporary file in the same folder, fsync, rename, fsync of the folder) with the
// file's mode, byte-order mark and line endings kept. The result and the confirm-mode preview are a
// unified diff. The policy judged the path before the call; the real path is checked again here
// against the floor and denied_paths, by name and by identity (a hard link to a key is refused).
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readSync,
  realpathSync,
  renameSync,
  type Stats,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod/v4';
import { applyEdits, type Edit, joinText, splitText } from './edit-apply.ts';
import { resolveToolPath } from './paths.ts';
import { looksBinary } from './read-file.ts';
import { shownPath } from './search-files.ts';
import { defineTool, type ToolContext, ToolError } from './types.ts';
import { unifiedDiff } from './unified-diff.ts';
import { PathGuard } from './walk/guard.ts';

/** Files larger than this are not edited (say so; write_file can still replace them). */
export const MAX_EDIT_BYTES = 4 * 1024 * 1024;
const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_WRONLY, O_CREAT, O_EXCL } = constants;

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
  /** The real path written (a symlink's target). */
  path: string;
  shown: string;
  before: string;
  after: string;
  /** The bytes to write. */
  bytes: Buffer;
  existing?: Stats;
  replacements: number;
}

function fsError(what: string, path: string, error: unknown): ToolError {
  return new ToolError(
    `cannot ${what} ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
  );
}

/** A new file: one edit with an empty old_string and a path that does not exist yet. */
function creation(args: EditFileArgs): string | undefined {
  const [first] = args.edits;
  return args.edits.length === 1 && first?.old_string === '' ? first.new_string : undefined;
}

function readExisting(path: string, guard: PathGuard): { raw: string; st: Stats } {
  let fd: number;
  try {
    fd = openSync(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    throw fsError('open', path, error);
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) throw new ToolError(`${path} is a folder`);
    if (!st.isFile()) throw new ToolError(`${path} is not a regular file`);
    const identity = guard.identityRefusal(st);
    if (identity) throw new ToolError(`${path} is ${identity}; it is protected and cannot be edited`);
    if (st.size > MAX_EDIT_BYTES) {
      throw new ToolError(
        `${path} is ${st.size} bytes, over edit_file's ${MAX_EDIT_BYTES / 2 ** 20} MiB limit; use write_file to replace it`,
      );
    }
    const buffer = Buffer.alloc(st.size);
    let length = 0;
    while (length < st.size) {
      const n = readSync(fd, buffer, length, st.size - length, length);
      if (n === 0) break;
      length += n;
    }
    const bytes = buffer.subarray(0, length);
    if (looksBinary(bytes)) {
      throw new ToolError(`${path} is a binary file (or not UTF-8 text); edit_file only edits text files`);
    }
    return { raw: bytes.toString('utf8'), st };
  } finally {
    closeSync(fd);
  }
}

/** Everything up to the write: the real path, its checks, the new text and the diff. */
function plan(args: EditFileArgs, context: ToolContext): Planned {
  const lexical = resolveToolPath(args.path, context.cwd, context.env.HOME);
  let path: string;
  let existing: Stats | undefined;
  try {
    path = realpathSync(lexical);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw fsError('open', lexical, error);
    if (creation(args) === undefined) {
      throw new ToolError(
        `${lexical} does not exist; to create it, pass one edit with an empty old_string, or use write_file`,
      );
    }
    // A new file in a folder that may itself be a symlink: the folder's real path decides.
    let dir: string;
    try {
      dir = realpathSync(dirname(lexical));
    } catch {
      dir = dirname(lexical);
    }
    path = join(dir, basename(lexical));
  }
  // Built for this path: under --unrestricted the protected entry that holds it is lifted, as the
  // policy lifted it; everything else stays protected (a hard link to another key, say).
  const guard = new PathGuard(context.protectedPaths, path);
  const refused = guard.refusal(path);
  if (refused) throw new ToolError(`${path} is inside ${refused}; it cannot be edited`);
  const shown = shownPath(path, safeRealpath(context.cwd));

  const created = creation(args);
  let before = '';
  let after: string;
  let bytes: Buffer;
  let replacements = 1;
  try {
    existing = statSync(path);
  } catch {
    existing = undefined;
  }
  if (existing) {
    const read = readExisting(path, guard);
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
  return { path, shown, before, after, bytes, ...(existing ? { existing } : {}), replacements };
}

function safeRealpath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** Writes `bytes` in place of `path` so a crash leaves the old file or the new one, never half of either. */
function writeAtomically(planned: Planned): void {
  const { path, bytes, existing } = planned;
  const dir = dirname(path);
  if (!existing) {
    try {
      mkdirSync(dir, { recursive: true });
    } catch (error) {
      throw fsError('create the folder', dir, error);
    }
  }
  const tmp = join(dir, `.${basename(path)}.${randomBytes(6).toString('hex')}.rune-edit`);
  let fd: number | undefined;
  try {
    fd = openSync(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
    // The file's permissions (an executable script stays executable) and, where rune may, owner.
    fchmodSync(fd, existing ? existing.mode & 0o7777 : 0o644);
    if (existing && process.getuid?.() === 0 && (existing.uid !== 0 || existing.gid !== 0)) {
      fchownSync(fd, existing.uid, existing.gid);
    }
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    if (existing) {
      // Someone else wrote the file since it was read: replacing it would lose their change.
      const now = statSync(path);
      if (now.ino !== existing.ino || now.size !== existing.size || now.mtimeMs !== existing.mtimeMs) {
        throw new ToolError(`${planned.shown} changed while it was being edited; read it again and retry`);
      }
    }
    renameSync(tmp, path);
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch {
      // Not created, or already renamed.
    }
    if (error instanceof ToolError) throw error;
    throw fsError('write', path, error);
  }
  // The rename is durable only once the folder's entry is on disk.
  try {
    const dirFd = openSync(dir, O_RDONLY | constants.O_DIRECTORY);
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  } catch {
    // Some file systems refuse fsync on a folder; the rename itself has happened.
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
