import { describe, expect, it } from 'vitest';
import { runSandboxCommand } from './command.ts';

describe('rune sandbox flags', () => {
  it('refuses an --allow-domain that rune.toml would refuse, before anything runs', async () => {
    for (const domain of ['*', 'https://api.github.com/', '*.com']) {
      await expect(runSandboxCommand(['true'], { allowDomain: [domain] })).rejects.toMatchObject({
        code: 'USAGE',
        message: expect.stringMatching(/^--allow-domain: /),
      });
    }
  });
});
