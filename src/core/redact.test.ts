import { afterEach, describe, expect, it, vi } from 'vitest';

// Each mode is bundled apart from main.ts, so the process holds several copies of redact.ts. Fresh
// module instances (vi.resetModules) stand in for those copies here.
async function freshCopy(): Promise<typeof import('./redact.ts')> {
  vi.resetModules();
  return import('./redact.ts');
}

describe('secret registry', () => {
  afterEach(async () => (await freshCopy()).clearSecretsForTests());

  it('a secret registered by one copy of the module is redacted by another', async () => {
    const modeBundle = await freshCopy();
    const entryBundle = await freshCopy();
    expect(modeBundle).not.toBe(entryBundle);
    modeBundle.registerSecret('plain-words-secret-42');
    expect(entryBundle.redact('the key plain-words-secret-42 leaked')).toBe('the key [REDACTED] leaked');
  });

  it('redacts a secret also as JSON escapes it and as a URL encodes it', async () => {
    const { registerSecret, redact } = await freshCopy();
    const secret = 'pa"ss\\word/42+x';
    registerSecret(secret);
    expect(redact(JSON.stringify({ password: secret }))).toBe('{"password":"[REDACTED]"}');
    expect(redact(`https://h.example/x?key=${encodeURIComponent(secret)}`)).toBe(
      'https://h.example/x?key=[REDACTED]',
    );
  });

  it('ignores values too short to be secrets and still catches key shapes nobody registered', async () => {
    const { registerSecret, redact } = await freshCopy();
    registerSecret('abc');
    expect(redact('abc')).toBe('abc');
    expect(redact('token ghp_abcdefghijklmnopqrstuvwx1234')).toBe('token [REDACTED]');
  });
});
