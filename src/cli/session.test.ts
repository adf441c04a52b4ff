import { describe, expect, it } from 'vitest';
import { createLogger } from '../core/logger.ts';
import { asideLogger } from './session-terminal.ts';

describe('asideLogger', () => {
  it('writes every line it logs beside the live pane, at every level', () => {
    const out: string[] = [];
    const base = createLogger({ level: 'debug', write: (line) => out.push(line) });
    const logger = asideLogger(base, (write) => {
      out.push('<erase>');
      write();
      out.push('<draw>');
    });
    logger.warn('cli.w', { message: 'careful' });
    logger.error('cli.e', { message: 'broken' });
    logger.info('cli.i', { message: 'note' });
    expect(out).toEqual([
      '<erase>',
      'warning: careful\n',
      '<draw>',
      '<erase>',
      'error: broken\n',
      '<draw>',
      '<erase>',
      'note\n',
      '<draw>',
    ]);
    expect(logger.verbose).toBe(false);
  });
});
