import { describe, expect, it } from 'vitest';
import { browserCommand, openBrowser } from './browser.ts';

describe('browserCommand', () => {
  it.each([
    [{ BROWSER: 'firefox' }, 'linux', ['firefox']],
    [{ BROWSER: 'w3m:lynx' }, 'linux', ['w3m']],
    [{ DISPLAY: ':0' }, 'linux', ['xdg-open']],
    [{ WAYLAND_DISPLAY: 'wayland-0' }, 'linux', ['xdg-open']],
    [{}, 'linux', undefined],
    [{}, 'darwin', ['open']],
  ] as const)('%j on %s → %j', (env, platform, expected) => {
    expect(browserCommand(env, platform)).toEqual(expected);
  });

  it('opens only http(s) URLs, and nothing without a browser', () => {
    expect(openBrowser('file:///etc/passwd', { BROWSER: 'true' })).toBe(false);
    expect(openBrowser('https://auth.example.com/authorize', {})).toBe(process.platform === 'darwin');
  });
});
