// Images for a prompt (`--image PATH`, an `@picture.png` mention in the session): PNG, JPEG, GIF
// or WebP, told apart by their first bytes (not their names), up to a size every provider takes.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { RuneError } from '../core/errors.ts';
import type { ImageAttachment } from '../providers/types.ts';

/** Anthropic's limit per image, the smallest of the providers'. */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

const IMAGE_NAME = /\.(png|jpe?g|gif|webp)$/i;

/** Whether a mention names an image (by its extension; the content is checked when it is read). */
export function looksLikeImage(path: string): boolean {
  return IMAGE_NAME.test(path);
}

/** The media type its first bytes show, if it is one of the four. */
export function imageType(head: Buffer): ImageAttachment['mediaType'] | undefined {
  if (head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return 'image/png';
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (
    head.subarray(0, 6).toString('latin1') === 'GIF87a' ||
    head.subarray(0, 6).toString('latin1') === 'GIF89a'
  )
    return 'image/gif';
  if (head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WEBP')
    return 'image/webp';
  return undefined;
}

/** Reads an image file (a regular file, without blocking on a FIFO); a clear error otherwise. */
export function loadImage(path: string, shown = path): ImageAttachment {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new RuneError('IO', `cannot read the image ${shown}: ${(error as NodeJS.ErrnoException).code}`, {
      cause: error,
    });
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw new RuneError('USAGE', `${shown} is not a file, so not an image`);
    if (info.size > MAX_IMAGE_BYTES)
      throw new RuneError(
        'USAGE',
        `the image ${shown} is ${(info.size / 1024 / 1024).toFixed(1)} MiB; images up to 5 MiB are sent (scale it down)`,
      );
    const data = Buffer.alloc(info.size);
    let read = 0;
    while (read < info.size) {
      const n = readSync(fd, data, read, info.size - read, read);
      if (n === 0) break;
      read += n;
    }
    const mediaType = imageType(data);
    if (!mediaType) throw new RuneError('USAGE', `${shown} is not a PNG, JPEG, GIF or WebP image`);
    return { mediaType, data: data.subarray(0, read).toString('base64'), name: shown };
  } finally {
    closeSync(fd);
  }
}
