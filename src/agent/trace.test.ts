import { describe, expect, it } from 'vitest';
import { writeTrace } from './trace.ts';

describe('writeTrace', () => {
  it('refuses a folder under /proc at once instead of hanging in mkdir', async () => {
    const input = {
      options: { prompt: 'p', cwd: '/', config: {} },
      result: {
        sessionId: 'abcdef12',
        model: 'm',
        status: 'FinalAnswer',
        steps: 1,
        usage: {},
        answer: 'a',
        toolCalls: [],
        messages: [],
      },
      events: [],
      startedAt: new Date(0),
    } as unknown as Parameters<typeof writeTrace>[1];
    await expect(writeTrace('/proc/rune-trace-test/x', input)).rejects.toThrow(/kernel pseudo-filesystem/);
    await expect(writeTrace('/sys/x', input)).rejects.toThrow(/kernel pseudo-filesystem/);
  });
});
