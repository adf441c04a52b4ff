// Size caps for tool results: every result the model reads is bounded, and a cut is always said.

/** Default cap of one tool result, in bytes of UTF-8. */
export const RESULT_CAP_BYTES = 32 * 1024;

/** Cuts text to at most `maxBytes` UTF-8 bytes on a character boundary and says what was dropped. */
export function capText(text: string, maxBytes = RESULT_CAP_BYTES, what = 'output'): string {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= maxBytes) return text;
  const buffer = Buffer.from(text, 'utf8');
  let end = maxBytes;
  // Step back over UTF-8 continuation bytes so no character is split.
  while (end > 0 && ((buffer[end] ?? 0) & 0xc0) === 0x80) end--;
  const kept = buffer.subarray(0, end).toString('utf8');
  return `${kept}\n[truncated: ${what} was ${bytes} bytes; the last ${bytes - end} bytes are not shown]`;
}
