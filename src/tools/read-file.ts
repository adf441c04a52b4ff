// read_file: a text file, or a range of its lines, capped at 32 KiB; binary files are detected and
// described instead of dumped. The cap is in bytes, so a line longer than the cap (minified code, a
// one-line JSON file) is read in pieces through `byte_offset`, never left unreadable.
import { z } from 'zod/v4';
import { isPathRefused, readAll } from '../core/fd/index.ts';
import { RESULT_CAP_BYTES } from './cap.ts';
import { type ToolTarget, toolFsError, toolTarget } from './target.ts';
import { defineTool, ToolError } from './types.ts';

const MAX_READ_BYTES = 16 * 1024 * 1024;
const SNIFF_BYTES = 8192;

const schema = z.strictObject({
  path: z.string().min(1).describe('File to read, absolute or relative to the working directory'),
  offset: z.number().int().min(1).optional().describe('First line to return, counting from 1'),
  limit: z.number().int().min(1).optional().describe('Number of lines to return'),
  byte_offset: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe(
      'Read from this byte of the file instead of by lines, for lines longer than the cap (not with offset or limit)',
    ),
});

/** Bytes of file text one result may carry: room is left for the note, so the registry's cap never cuts it. */
const PIECE_BYTES = RESULT_CAP_BYTES - 512;

/** The largest end ≤ `end` that does not split a UTF-8 character (continuation bytes are 10xxxxxx). */
function charBoundary(buffer: Buffer, end: number): number {
  let at = Math.min(end, buffer.length);
  while (at > 0 && at < buffer.length && ((buffer[at] ?? 0) & 0xc0) === 0x80) at--;
  return at;
}

export type ReadFileArgs = z.infer<typeof schema>;

/** True when the bytes look like a binary file: a NUL byte, or text that is not valid UTF-8. */
export function looksBinary(sample: Buffer): boolean {
  if (sample.includes(0)) return true;
  try {
    // A multi-byte character cut at the sample's end is not a sign of binary data.
    let end = sample.length;
    for (let back = 1; back <= 3 && end - back >= 0; back++) {
      const byte = sample[end - back] ?? 0;
      if ((byte & 0xc0) === 0xc0) {
        end -= back;
        break;
      }
      if ((byte & 0x80) === 0) break;
    }
    new TextDecoder('utf-8', { fatal: true }).decode(sample.subarray(0, end));
    return false;
  } catch {
    return true;
  }
}

export const readFileTool = defineTool<ReadFileArgs>({
  name: 'read_file',
  description:
    'Read a text file. Returns at most 32 KiB; use offset and limit (in lines) to read further, or byte_offset for a line longer than that. Binary files are reported, not shown.',
  schema,
  readOnly: true,
  access: { kind: 'read', target: 'file' },
  async execute(args, context) {
    if (args.byte_offset !== undefined && (args.offset !== undefined || args.limit !== undefined)) {
      throw new ToolError('byte_offset reads by bytes; give it alone, without offset or limit');
    }
    const target = toolTarget(args.path, context);
    const path = target.shown;
    const { buffer, cut, size } = readTarget(target);
    const sizeText = cut ? `${Math.max(size, buffer.length)}+` : `${Math.max(size, buffer.length)}`;

    if (looksBinary(buffer.subarray(0, SNIFF_BYTES))) {
      return { content: `${path} is a binary file (${sizeText} bytes); its content is not shown` };
    }
    if (args.byte_offset !== undefined)
      return { content: readBytes(buffer, args.byte_offset, path, sizeText) };
    const lines = buffer.toString('utf8').split('\n');
    // A final newline does not start another line.
    if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
    const total = lines.length;
    const first = args.offset ?? 1;
    if (first > total && !(total === 0 && first === 1)) {
      throw new ToolError(`offset ${first} is past the end of ${path} (${total} lines)`);
    }
    const last = Math.min(total, args.limit === undefined ? total : first + args.limit - 1);

    const out: string[] = [];
    let bytes = 0;
    let shownLast = first - 1;
    for (let n = first; n <= last; n++) {
      const line = lines[n - 1] ?? '';
      const size = Buffer.byteLength(line, 'utf8') + 1;
      // Room is left for the note, so the registry's overall cap never cuts it off.
      if (bytes + size > PIECE_BYTES) break;
      out.push(line);
      bytes += size;
      shownLast = n;
    }
    let content = out.join('\n');
    if (out.length === 0 && first <= last) {
      // The first line asked for is longer than the cap by itself: show its head, continue by bytes.
      let start = 0;
      for (let n = 1; n < first; n++) start += Buffer.byteLength(lines[n - 1] ?? '', 'utf8') + 1;
      const lineBytes = Buffer.byteLength(lines[first - 1] ?? '', 'utf8');
      const end = charBoundary(buffer, start + PIECE_BYTES);
      return {
        content: `${buffer.subarray(start, end).toString('utf8')}\n[truncated: line ${first} alone is ${lineBytes} bytes, over the 32 KiB cap; showing its first ${end - start} bytes; call read_file with byte_offset=${end} to read on]`,
      };
    }
    if (shownLast < last) {
      content += `\n[truncated: showing lines ${first}-${shownLast} of ${total} (32 KiB cap); call read_file with offset=${shownLast + 1} to read on]`;
    } else if (cut && shownLast === total) {
      content += `\n[truncated: only the first ${MAX_READ_BYTES} of ${sizeText} bytes of this file can be read]`;
    } else if (first > 1 || last < total) {
      content += `\n[lines ${first}-${last} of ${total}]`;
    }
    return { content };
  },
});

/**
 * The file's bytes, read through its descriptor (opened through no link, a FIFO refused without
 * blocking). Files in /proc and /sys report st_size 0 yet have content: read to EOF within the cap.
 */
function readTarget(target: ToolTarget): { buffer: Buffer; cut: boolean; size: number } {
  const { root, rel, shown } = target;
  let opened: ReturnType<typeof root.openFile>;
  try {
    opened = root.openFile(rel);
  } catch (error) {
    if (isPathRefused(error) && error.kind === 'dir')
      throw new ToolError(`${shown} is a directory; use list_dir`);
    throw toolFsError('read', shown, error);
  }
  try {
    const { bytes, cut } = readAll(opened.fd, MAX_READ_BYTES);
    return { buffer: bytes, cut, size: opened.entry.size };
  } catch (error) {
    throw toolFsError('read', shown, error);
  } finally {
    root.sys.close(opened.fd);
  }
}

/** One piece of the file by bytes, starting on a character boundary at or after `offset`. */
function readBytes(buffer: Buffer, offset: number, path: string, sizeText: string): string {
  if (offset > buffer.length || (offset === buffer.length && offset > 0)) {
    throw new ToolError(`byte_offset ${offset} is past the end of ${path} (${sizeText} bytes)`);
  }
  let start = offset;
  while (start < buffer.length && ((buffer[start] ?? 0) & 0xc0) === 0x80) start++;
  const end = charBoundary(buffer, start + PIECE_BYTES);
  const text = buffer.subarray(start, end).toString('utf8');
  if (end < buffer.length) {
    return `${text}\n[truncated: showing bytes ${start}-${end} of ${sizeText} (32 KiB cap); call read_file with byte_offset=${end} to read on]`;
  }
  return `${text}\n[bytes ${start}-${end} of ${sizeText}]`;
}
