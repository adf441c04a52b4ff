import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from './logger.ts';
import { clearSecretsForTests, redact, redactValue, registerSecret } from './redact.ts';

afterEach(() => clearSecretsForTests());

function capture(options: Parameters<typeof createLogger>[0] = {}) {
  const lines: string[] = [];
  const logger = createLogger({ ...options, write: (line) => lines.push(line), now: () => new Date(0) });
  return { logger, lines };
}

describe('logger', () => {
  it('writes NDJSON {time, level, event, ...} with --verbose', () => {
    const { logger, lines } = capture({ verbose: true });
    logger.debug('agent.tool_call', { tool: 'ls' });
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toEqual({
      time: '1970-01-01T00:00:00.000Z',
      level: 'debug',
      event: 'agent.tool_call',
      tool: 'ls',
    });
  });

  it('writes only warnings and errors as short lines otherwise', () => {
    const { logger, lines } = capture();
    logger.info('agent.chatty');
    logger.warn('agent.w', { message: 'disk is slow' });
    logger.error('agent.e');
    expect(lines).toEqual(['warning: disk is slow\n', 'error: agent.e\n']);
  });

  it('redacts registered secrets and key-shaped strings in both forms', () => {
    registerSecret('hunter2-very-secret');
    const verbose = capture({ verbose: true });
    verbose.logger.warn('agent.x', {
      message: 'key hunter2-very-secret',
      headers: { authorization: 'Bearer abc' },
    });
    expect(verbose.lines[0]).not.toContain('hunter2');
    expect(JSON.parse(verbose.lines[0]!).headers.authorization).toBe('[REDACTED]');
    const plain = capture();
    plain.logger.error('agent.x', { message: 'bad key sk-abcdefghijklmnopqrstuvwx' });
    expect(plain.lines[0]).toBe('error: bad key [REDACTED]\n');
  });
});

describe('redact', () => {
  it('ignores values too short to be secrets', () => {
    registerSecret('abc');
    expect(redact('abc abc')).toBe('abc abc');
  });

  it('catches provider key shapes nobody registered', () => {
    for (const key of [
      'sk-ant-api03-abcdefghijklmnopqrstu',
      'ghp_abcdefghijklmnopqrstuvwxyz0123',
      `AIza${'x'.repeat(35)}`,
    ]) {
      expect(redact(`token=${key}`)).toBe('token=[REDACTED]');
    }
  });

  it('deep-redacts values under secret-named keys', () => {
    expect(redactValue({ api_key: 'plain', nested: [{ token: 't' }], ok: 'fine' })).toEqual({
      api_key: '[REDACTED]',
      nested: [{ token: '[REDACTED]' }],
      ok: 'fine',
    });
  });
});
