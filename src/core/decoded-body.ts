// An HTTP response body as its sender meant it: gzip, deflate and brotli undone, anything else (or
// nothing) passed as it came. zlib and stream are loaded only for a compressed body, so a start that
// never receives one does not pay for them.
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';

export function decodedBody(message: IncomingMessage): Readable {
  const encoding = (message.headers['content-encoding'] ?? '').trim().toLowerCase();
  if (!encoding || encoding === 'identity') return message;
  const zlib = process.getBuiltinModule('node:zlib');
  const { pipeline } = process.getBuiltinModule('node:stream');
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? zlib.createGunzip({ flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH })
      : encoding === 'deflate'
        ? zlib.createInflate()
        : encoding === 'br'
          ? zlib.createBrotliDecompress()
          : undefined;
  if (!decoder) return message;
  // Either side's error ends both; a consumer that stops reading ends the response too.
  pipeline(message, decoder, () => {
    // Errors surface on the decoder, which the caller reads.
  });
  return decoder;
}
