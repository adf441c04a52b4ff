import { describe, expect, it } from 'vitest';
import { decodeRun, encodeRun, type RunRecord } from './run-record.ts';

const record: RunRecord = {
  v: 1,
  ref: 'sha256:abc',
  prompt: 'say <b>hi</b> --> now',
  model: 'm',
  timestamp: '2025-01-01T00:00:00.000Z',
  usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
  stop_reason: 'FinalAnswer',
  steps: 1,
  tool_calls: 0,
};

describe('stored run format', () => {
  it.each([
    ['plain'],
    [''],
    ['\n\nleading newlines\r\nand CRLF\n'],
    ['<!-- rune-run {"v":1} -->\n\nan answer that looks like a header'],
    ['unicode ✓ \u2028 end'],
  ])('round-trips the answer %j byte for byte', (answer) => {
    const content = encodeRun(record, answer);
    expect(content.split('\n')[0]).not.toMatch(/-->.*-->/);
    expect(decodeRun(content)).toEqual({ record, answer });
  });

  it('keeps the header one HTML comment even when the prompt holds -->', () => {
    const header = encodeRun(record, 'x').split('\n')[0]!;
    expect(header.indexOf('-->')).toBe(header.length - 3);
  });

  it('refuses content that is not a stored run', () => {
    expect(decodeRun('# my notes')).toBeUndefined();
    expect(decodeRun('<!-- rune-run {"v":2,"ref":"x"} -->\n\nx')).toBeUndefined();
    expect(decodeRun('<!-- rune-run {broken -->\n\nx')).toBeUndefined();
  });
});
