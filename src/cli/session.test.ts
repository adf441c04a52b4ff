import { describe, expect, it } from 'vitest';
import { createLogger } from '../core/logger.ts';
import { clearingLogger } from './session-terminal.ts';

describe('clearingLogger', () => {
  it('wipes the spinner line before every line it logs, at every level', () => {
    const out: string[] = [];
    const base = createLogger({ level: 'debug', write: (line) => out.push(line) });
    const logger = clearingLogger(base, () => out.push('<clear>'));
    logger.warn('cli.w', { message: 'careful' });
    logger.error('cli.e', { message: 'broken' });
    logger.info('cli.i', { message: 'note' });
    expect(out).toEqual(['<clear>', 'warning: careful\n', '<clear>', 'error: broken\n', '<clear>', 'note\n']);
    expect(logger.verbose).toBe(false);
  });
});
