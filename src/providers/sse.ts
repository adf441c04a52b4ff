// Server-sent events from a fetch body: the `event:` name and the joined `data:` lines of each
// event, for the Gemini and Anthropic wires (the openai SDK parses its own).

export interface SseEvent {
  event: string | undefined;
  data: string;
}

export async function* readSse(
  body: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>,
): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event: string | undefined;
  let data: string[] = [];
  // A node:http body (http-fetch.ts) is async-iterable; a web ReadableStream is read through its reader.
  const chunks: AsyncIterable<Uint8Array> =
    Symbol.asyncIterator in body
      ? (body as AsyncIterable<Uint8Array>)
      : readerChunks(body as ReadableStream<Uint8Array>);
  for await (const value of chunks) {
    buffer += decoder.decode(value, { stream: true });
    yield* takeEvents(false);
  }
  buffer += decoder.decode();
  yield* takeEvents(true);
  if (data.length > 0) yield { event, data: data.join('\n') };

  function* takeEvents(done: boolean): Generator<SseEvent> {
    let newline = buffer.search(/\r\n|\r|\n/);
    while (newline >= 0) {
      // A CR at the very end may be the first half of a CRLF split across reads.
      if (!done && newline === buffer.length - 1 && buffer.endsWith('\r')) break;
      const line = buffer.slice(0, newline);
      const width = buffer.startsWith('\r\n', newline) ? 2 : 1;
      buffer = buffer.slice(newline + width);
      if (line === '') {
        if (data.length > 0) yield { event, data: data.join('\n') };
        event = undefined;
        data = [];
      } else if (!line.startsWith(':')) {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
      }
      newline = buffer.search(/\r\n|\r|\n/);
    }
  }
}

async function* readerChunks(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

/**
 * The body passed through unchanged, and `seen.done` set when a `data: [DONE]` line went by: the
 * OpenAI wire's end marker, which the openai SDK reads and drops. Only the start of each line is
 * looked at (a JSON string cannot hold a raw newline, so an answer quoting "[DONE]" never matches).
 */
export async function* watchDone(
  body: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>,
  seen: { done: boolean },
): AsyncGenerator<Uint8Array> {
  const chunks: AsyncIterable<Uint8Array> =
    Symbol.asyncIterator in body
      ? (body as AsyncIterable<Uint8Array>)
      : readerChunks(body as ReadableStream<Uint8Array>);
  let line = '';
  const check = (): void => {
    if (/^data: ?\[DONE\]/.test(line)) seen.done = true;
  };
  for await (const chunk of chunks) {
    const text = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('latin1');
    let start = 0;
    for (;;) {
      const newline = text.indexOf('\n', start);
      const end = newline < 0 ? text.length : newline;
      if (line.length < 16) line += text.slice(start, Math.min(end, start + 16 - line.length));
      if (newline < 0) break;
      check();
      line = '';
      start = newline + 1;
    }
    yield chunk;
  }
  check();
}
