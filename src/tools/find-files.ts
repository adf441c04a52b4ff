// find_files: files whose path matches a glob, newest first, over the same policy-safe walk as
// search_files. A fixed folder at the start of the glob (`src/` in `src/**/test*`) becomes the
// walk's root, so only that folder is walked.
import { join } from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod/v4';
import { type Kind, Root } from '../core/fd/index.ts';
import { canonicalise, isUnder } from '../core/paths.ts';
import { endNotes, shownPath, skippedNote, WALK_TIME_LIMIT_MS, walkRoot } from './search-files.ts';
import { defineTool, ToolError } from './types.ts';
import { type FindJob, MAX_FOUND } from './walk/job.ts';
import { runWalkJob } from './walk/runner.ts';

const SHOWN = 100;

const schema = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .describe(
      'Glob relative to `path`: "**/*.ts", "src/**/test*", "*.md" (no slash: file names at any depth)',
    ),
  path: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Folder to look in, absolute or relative to the working directory (default: the working directory)',
    ),
});

export type FindFilesArgs = z.infer<typeof schema>;

/** The glob's fixed folder prefix and the rest; refuses what would leave `path`. */
export function splitGlob(pattern: string): { base: string; glob: string } {
  if (pattern.startsWith('/') || pattern.startsWith('~')) {
    throw new ToolError(
      'pattern must be relative to path; put the folder in path (e.g. path="/srv/app", pattern="**/*.ts")',
    );
  }
  if (pattern.startsWith('!'))
    throw new ToolError('negated patterns are not supported; say which files to find');
  if (pattern.split('/').includes('..'))
    throw new ToolError('pattern must not contain ".."; put the folder in path');
  // `src/` means everything in src; `./src/**` the same as `src/**`.
  const plain = pattern.replace(/^(\.\/)+/, '');
  const normal = plain.endsWith('/') ? `${plain}**` : plain;
  const scan = picomatch.scan(normal);
  if (scan.isGlob) return { base: scan.base, glob: scan.glob };
  // No glob characters: a plain path, found in its folder.
  const slash = normal.lastIndexOf('/');
  return slash === -1
    ? { base: '', glob: normal }
    : { base: normal.slice(0, slash), glob: normal.slice(slash + 1) };
}

/** What is at the canonical `path` (looked at through no link), or undefined when nothing is. */
function baseKind(path: string): Kind | undefined {
  try {
    return Root.system().stat(path.slice(1))?.kind;
  } catch {
    return 'symlink'; // a link appeared on the way since it was resolved
  }
}

export const findFilesTool = defineTool<FindFilesArgs>({
  name: 'find_files',
  description: `Find files by glob pattern ("**/*.ts", "src/**/test*"), newest first (at most ${SHOWN} shown). Lists the files search_files would search: skips files ignored by .gitignore/.ignore, the .git folder, binary files, files over 4 MiB, symbolic links and anything the policy protects (list_dir shows a folder's every entry).`,
  schema,
  readOnly: true,
  access: { kind: 'read', target: 'tree' },
  async execute(args, context) {
    const { root: top, cwd } = walkRoot(args.path, context);
    const { base, glob } = splitGlob(args.pattern);
    let root = top;
    if (base !== '') {
      root = canonicalise(join(top, base));
      // A symlink on the way would lead the walk out of the folder the policy judged.
      if (!isUnder(root, top)) {
        throw new ToolError(
          `${base} leads outside ${shownPath(top, cwd)} through a symbolic link; name that folder in path`,
        );
      }
      const kind = baseKind(root);
      if (kind === undefined) {
        return {
          content: `No files match ${args.pattern} in ${shownPath(top, cwd)}: ${base} does not exist.`,
        };
      }
      if (kind !== 'dir') return { content: `No files match ${args.pattern}: ${base} is not a folder.` };
    }
    const job: FindJob = {
      kind: 'find',
      root,
      cwd,
      protectedPaths: context.protectedPaths,
      sandboxMode: context.config.sandbox.mode,
      pattern: glob,
    };
    const result = await runWalkJob(job, { signal: context.signal, timeoutMs: WALK_TIME_LIMIT_MS });
    if (result.error) throw new ToolError(result.error);
    const skipped = skippedNote(result.stats);
    if (result.found.length === 0) {
      return {
        content: [
          `No files match ${args.pattern} in ${shownPath(top, cwd)}.`,
          ...(skipped ? [skipped] : []),
          ...endNotes(result),
        ].join('\n'),
        ...(result.layers.length > 0 ? { layers: result.layers } : {}),
      };
    }
    const found = [...result.found].sort((a, b) => b.mtimeMs - a.mtimeMs || (a.path < b.path ? -1 : 1));
    const lines = found.slice(0, SHOWN).map((file) => file.path);
    const total = result.stopped ? `at least ${MAX_FOUND}` : String(found.length);
    lines.push('');
    lines.push(
      found.length > SHOWN
        ? `[${total} files match; the ${SHOWN} newest are shown; narrow the pattern or path to see others${skipped ? `; ${skipped}` : ''}]`
        : `[${total} ${found.length === 1 ? 'file matches' : 'files match'}, newest first${skipped ? `; ${skipped}` : ''}]`,
    );
    lines.push(...endNotes(result));
    return { content: lines.join('\n'), ...(result.layers.length > 0 ? { layers: result.layers } : {}) };
  },
});
