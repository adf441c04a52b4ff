// search_files: a regular expression over the files under a folder, like `git grep -n`, run in a
// worker over the policy-safe walk (src/tools/walk/). Results are `file:line: text`, grouped by
// file in path order, capped in count and size with a note that says so.
import { relative } from 'node:path';
import { z } from 'zod/v4';
import { isUnder, realPath } from '../core/paths.ts';
import { RESULT_CAP_BYTES } from './cap.ts';
import { toolFsError, toolTarget } from './target.ts';
import { defineTool, type ToolContext, ToolError } from './types.ts';
import { MAX_SEARCH_FILE_BYTES, type SearchJob } from './walk/job.ts';
import { type JobResult, runWalkJob } from './walk/runner.ts';
import { compileMatcher } from './walk/scan.ts';
import type { WalkStats } from './walk/walk.ts';

/** A walk that takes longer is stopped; what it found until then is returned. */
export const WALK_TIME_LIMIT_MS = 30_000;
const DEFAULT_RESULTS = 100;

const schema = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .describe(
      'Regular expression (JavaScript syntax) matched against each line, e.g. "function\\s+\\w+Error"',
    ),
  path: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Folder or file to search, absolute or relative to the working directory (default: the working directory)',
    ),
  include: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Only files matching this glob: "*.ts" matches file names at any depth, "src/**/*.test.ts" paths below `path`',
    ),
  case_insensitive: z.boolean().optional().describe('Ignore case (default false)'),
  context: z
    .number()
    .int()
    .min(0)
    .max(10)
    .optional()
    .describe('Lines to show before and after each match (default 0)'),
  max_results: z
    .number()
    .int()
    .min(1)
    .max(1000)
    .optional()
    .describe(`Matching lines to return at most (default ${DEFAULT_RESULTS})`),
});

export type SearchFilesArgs = z.infer<typeof schema>;

/**
 * The canonical folder or file a walk tool starts from: the path the policy judged (not wherever
 * the name leads now), in a grant that is still where it was pinned. The walk opens it through no link.
 */
export function walkRoot(path: string | undefined, context: ToolContext): { root: string; cwd: string } {
  const target = toolTarget(path ?? '.', context);
  let st: ReturnType<typeof target.root.stat>;
  try {
    st = target.root.stat(target.rel);
  } catch (error) {
    throw toolFsError('open', target.shown, error);
  }
  if (!st) throw new ToolError(`${target.shown} does not exist`);
  return { root: target.real, cwd: realPath(context.cwd) };
}

export function shownPath(path: string, cwd: string): string {
  return isUnder(path, cwd) ? relative(cwd, path) || '.' : path;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** "skipped: …" for what the walk left out, or '' when nothing was. */
export function skippedNote(stats: WalkStats): string {
  const parts: string[] = [];
  if (stats.ignored) parts.push(`${plural(stats.ignored, 'entry', 'entries')} ignored by .gitignore/.ignore`);
  if (stats.binary) parts.push(plural(stats.binary, 'binary file'));
  if (stats.large) parts.push(`${plural(stats.large, 'file')} over ${MAX_SEARCH_FILE_BYTES / 2 ** 20} MiB`);
  if (stats.protected) {
    parts.push(
      `${plural(stats.protected, 'protected entry', 'protected entries')} (secrets floor, denied_paths)`,
    );
  }
  if (stats.symlinks) parts.push(`${plural(stats.symlinks, 'symbolic link')} (never followed)`);
  if (stats.unreadable) parts.push(`${plural(stats.unreadable, 'unreadable entry', 'unreadable entries')}`);
  return parts.length > 0 ? `skipped: ${parts.join(', ')}` : '';
}

export function endNotes(result: JobResult): string[] {
  const notes: string[] = [];
  if (result.timedOut) {
    notes.push(
      `[stopped after ${WALK_TIME_LIMIT_MS / 1000} s: the results are incomplete; narrow path or include]`,
    );
  }
  if (result.cancelled) notes.push('[cancelled: the results are incomplete]');
  return notes;
}

function formatSearch(args: SearchFilesArgs, result: JobResult, rootShown: string, limit: number): string {
  const matches = result.files.reduce((n, f) => n + f.matches, 0);
  const skipped = skippedNote(result.stats);
  if (result.files.length === 0) {
    const notes = endNotes(result);
    const where = `/${args.pattern}/${args.case_insensitive ? 'i' : ''} in ${rootShown}`;
    if (result.timedOut || result.cancelled)
      return [`No matches for ${where} before the search was stopped.`, ...notes].join('\n');
    return [
      `No matches for ${where} (${plural(result.stats.files, 'file')} looked at${args.include ? ` for ${args.include}` : ''}).`,
      ...(skipped ? [skipped] : []),
      ...notes,
    ].join('\n');
  }
  // Room is kept for the closing notes, so the registry's overall cap never cuts them.
  const budget = RESULT_CAP_BYTES - 1024;
  const blocks: string[] = [];
  let bytes = 0;
  let shownFiles = 0;
  let shownMatches = 0;
  for (const file of result.files) {
    const lines: string[] = [];
    let previous = -1;
    for (const line of file.lines) {
      if (previous !== -1 && line.n > previous + 1) lines.push('--');
      lines.push(`${file.path}${line.match ? ':' : '-'}${line.n}${line.match ? ':' : '-'} ${line.text}`);
      previous = line.n;
    }
    const block = lines.join('\n');
    const size = Buffer.byteLength(block) + 2;
    if (bytes + size > budget && shownFiles > 0) break;
    blocks.push(block);
    bytes += size;
    shownFiles++;
    shownMatches += file.matches;
  }
  const summary = [`[${plural(matches, 'matching line')} in ${plural(result.files.length, 'file')}`];
  if (skipped) summary.push(`; ${skipped}`);
  summary.push(']');
  const notes: string[] = [summary.join('')];
  if (shownFiles < result.files.length) {
    notes.push(
      `[output cut at 32 KiB: ${plural(matches - shownMatches, 'more matching line')} in ${plural(result.files.length - shownFiles, 'more file')} not shown; narrow path, include or the pattern]`,
    );
  }
  if (result.stopped) {
    notes.push(
      `[stopped at max_results=${limit}: there are more matches; narrow path, include or the pattern, or raise max_results]`,
    );
  }
  notes.push(...endNotes(result));
  return `${blocks.join('\n\n')}\n\n${notes.join('\n')}`;
}

export const searchFilesTool = defineTool<SearchFilesArgs>({
  name: 'search_files',
  description:
    'Search file contents with a regular expression (like grep -rn / git grep -n), under a folder (default: the working directory). Results are "file:line: text" grouped by file. Skips files ignored by .gitignore/.ignore, the .git folder, binary files, files over 4 MiB, symbolic links and anything the policy protects. Prefer this to running grep.',
  schema,
  readOnly: true,
  access: { kind: 'read', target: 'tree' },
  async execute(args, context) {
    const { root, cwd } = walkRoot(args.path, context);
    try {
      compileMatcher(args.pattern, args.case_insensitive ?? false);
    } catch (error) {
      throw new ToolError(
        `invalid regular expression: ${(error as Error).message}; use JavaScript syntax, and escape ( ) [ ] { } . * + ? | \\ to match them literally`,
      );
    }
    const limit = args.max_results ?? DEFAULT_RESULTS;
    const job: SearchJob = {
      kind: 'search',
      root,
      cwd,
      protectedPaths: context.protectedPaths,
      sandboxMode: context.config.sandbox.mode,
      pattern: args.pattern,
      caseInsensitive: args.case_insensitive ?? false,
      ...(args.include ? { include: args.include } : {}),
      context: args.context ?? 0,
      maxResults: limit,
    };
    const result = await runWalkJob(job, { signal: context.signal, timeoutMs: WALK_TIME_LIMIT_MS });
    if (result.error) throw new ToolError(result.error);
    return {
      content: formatSearch(args, result, shownPath(root, cwd), limit),
      ...(result.layers.length > 0 ? { layers: result.layers } : {}),
    };
  },
});
