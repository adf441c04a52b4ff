import { describe, expect, it } from 'vitest';
import { readSse, type SseEvent } from './sse.ts';

function body(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function collect(chunks: string[]): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const event of readSse(body(chunks))) out.push(event);
  return out;
}

describe('readSse', () => {
  it('parses named events and joins multi-line data, ignoring comments', async () => {
    expect(await collect([': ping\n', 'event: a\ndata: one\ndata: two\n\n', 'data: {"x":1}\n\n'])).toEqual([
      { event: 'a', data: 'one\ntwo' },
      { event: undefined, data: '{"x":1}' },
    ]);
  });

  it('handles events and CRLF line ends split across reads', async () => {
    expect(await collect(['data: hel', 'lo\r', '\n\r\ndata: wor', 'ld\r\n\r\n'])).toEqual([
      { event: undefined, data: 'hello' },
      { event: undefined, data: 'world' },
    ]);
  });

  it('yields a last complete line without its blank line, drops a cut-off one', async () => {
    expect(await collect(['data: tail\n'])).toEqual([{ event: undefined, data: 'tail' }]);
    expect(await collect(['data: whole\n\ndata: cut'])).toEqual([{ event: undefined, data: 'whole' }]);
  });
});
