import { describe, expect, it } from 'vitest';
import { stampClientId } from './presence.ts';

describe('stampClientId', () => {
  it('gives one person and tab the same stamp every time, another person another, and hides the chosen id', () => {
    const first = stampClientId('local:ada', 'tab-1');
    expect(first).toMatch(/^c_[A-Za-z0-9_-]{16}$/);
    expect(first).not.toContain('tab-1');
    expect(stampClientId('local:ada', 'tab-1')).toBe(first);
    expect(stampClientId('local:bob', 'tab-1')).not.toBe(first);
    expect(stampClientId('local:ada', 'tab-2')).not.toBe(first);
    expect(stampClientId(null, 'tab-1')).not.toBe(first);
    // The subject and the chosen id cannot be shifted into each other.
    expect(stampClientId('local:ada\0tab', '1')).not.toBe(stampClientId('local:ada', 'tab\u00001'));
    // Nor can two subjects or ids that differ only in a lone surrogate (UTF-8 makes each one U+FFFD).
    expect(stampClientId('oidc:x\uD800', 'tab')).not.toBe(stampClientId('oidc:x\uFFFD', 'tab'));
    expect(stampClientId('oidc:x\uDC00', 'tab')).not.toBe(stampClientId('oidc:x\uD800', 'tab'));
    expect(stampClientId(null, 'tab-\uD800')).not.toBe(stampClientId(null, 'tab-\uFFFD'));
  });

  it('stays the same after many other stamps (the kept stamps are bounded and cleared)', () => {
    const before = stampClientId('token:7', 'editor');
    for (let i = 0; i < 10_000; i++) stampClientId(`token:${i}`, `tab-${i}`);
    expect(stampClientId('token:7', 'editor')).toBe(before);
  });
});
