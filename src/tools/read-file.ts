// read_file: a text file, or a range of its lines, capped at 32 KiB; binary files are detected and
// described instead of dumped.
import { open, stat } from 'node:fs/promises';
import { z } from 'zod/v4';
import { RESULT_CAP_BYTES } from './cap.ts';
import { resolveToolPath } from './paths.ts';
import { defineTool, ToolError } from './types.ts';

const MAX_READ_BYTES = 16 * 1024 * 1024;
const SNIFF_BYTES = 8192;

const schema = z.strictObject({
  path: z.string().min(1).describe('File to read, absolute or relative to the working directory'),
  offset: z.number().int().min(1).optional().describe('First line to return, counting from 1'),
  limit: z.number().int().min(1).optional().describe('Number of lines to return'),
});

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
    'Read a text file. Returns at most 32 KiB; use offset and limit (in lines) to read further. Binary files are reported, not shown.',
  schema,
  readOnly: true,
  async execute(args, context) {
    const path = resolveToolPath(args.path, context.cwd, context.env.HOME);
    const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
      throw new ToolError(`cannot read ${path}: ${error.code ?? error.message}`);
    });
    if (info.isDirectory()) throw new ToolError(`${path} is a directory; use list_dir`);
    if (!info.isFile()) throw new ToolError(`${path} is not a regular file`);

    const handle = await open(path, 'r');
    let buffer: Buffer;
    // Files in /proc and /sys report st_size 0 (or a page size) yet have content: read to EOF
    // within the cap instead of trusting the size.
    let cut = false;
    try {
      const chunks: Buffer[] = [];
      let read = 0;
      while (read < MAX_READ_BYTES) {
        const chunk = Buffer.alloc(Math.min(64 * 1024, MAX_READ_BYTES - read));
        const { bytesRead } = await handle.read(chunk, 0, chunk.length, read);
        if (bytesRead === 0) break;
        chunks.push(chunk.subarray(0, bytesRead));
        read += bytesRead;
      }
      if (read >= MAX_READ_BYTES) {
        const { bytesRead } = await handle.read(Buffer.alloc(1), 0, 1, read);
        cut = bytesRead > 0;
      }
      buffer = Buffer.concat(chunks, read);
    } finally {
      await handle.close();
    }
    const sizeText = cut ? `${Math.max(info.size, buffer.length)}+` : `${Math.max(info.size, buffer.length)}`;

    if (looksBinary(buffer.subarray(0, SNIFF_BYTES))) {
      return { content: `${path} is a binary file (${sizeText} bytes); its content is not shown` };
    }
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
      if (bytes + size > RESULT_CAP_BYTES - 512) break;
      out.push(line);
      bytes += size;
      shownLast = n;
    }
    let content = out.join('\n');
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
