import { describe, expect, it } from 'vitest';
import { toToolOutput } from './result.ts';

const PNG_1x1 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

describe('toToolOutput', () => {
  it('prefers structuredContent, as JSON text', () => {
    const out = toToolOutput({
      content: [{ type: 'text', text: '{"temperature": 22.5}' }],
      structuredContent: { temperature: 22.5, conditions: 'Sunny' },
    });
    expect(out).toEqual({ content: '{"temperature":22.5,"conditions":"Sunny"}', isError: false });
  });

  it('joins text parts and summarises images, audio and resources', () => {
    const out = toToolOutput({
      content: [
        { type: 'text', text: 'first' },
        { type: 'image', data: PNG_1x1, mimeType: 'image/png' },
        { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'demo://r/1', mimeType: 'text/plain', text: 'hello' } },
        { type: 'resource', resource: { uri: 'demo://r/2', blob: 'AAAAAA==' } },
        { type: 'resource_link', uri: 'demo://r/3', name: 'three', description: 'the third' },
        { type: 'text', text: 'last' },
      ],
    });
    expect(out.isError).toBe(false);
    expect(out.content.split('\n')).toEqual([
      'first',
      '[image: image/png, 70 bytes]',
      '[audio: audio/wav, 3 bytes]',
      '[resource demo://r/1, text/plain, 5 characters]',
      '[resource demo://r/2, 4 bytes]',
      '[resource link "three" demo://r/3: the third]',
      'last',
    ]);
  });

  it('turns isError into an error result carrying the text', () => {
    expect(toToolOutput({ content: [{ type: 'text', text: 'no such city' }], isError: true })).toEqual({
      content: 'no such city',
      isError: true,
    });
    expect(toToolOutput({ content: [], isError: true })).toEqual({
      content: 'the tool reported an error without a message',
      isError: true,
    });
  });

  it('says when a tool returned nothing', () => {
    expect(toToolOutput({ content: [] }).content).toBe('(the tool returned no content)');
  });

  it('reads the legacy toolResult shape', () => {
    expect(toToolOutput({ toolResult: { ok: 1 } }).content).toBe('{"ok":1}');
  });

  it('caps a large result with a truncation note', () => {
    const out = toToolOutput({ content: [{ type: 'text', text: 'x'.repeat(5000) }] }, 1000);
    expect(Buffer.byteLength(out.content)).toBeLessThan(1200);
    expect(out.content).toMatch(
      /\[truncated: the MCP tool result was 5000 bytes; the last 4000 bytes are not shown\]$/,
    );
  });
});
