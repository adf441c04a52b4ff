import { describe, expect, it } from 'vitest';
import { startLoopback } from './loopback.ts';

async function get(url: string): Promise<number> {
  return (await fetch(url)).status;
}

describe('startLoopback', () => {
  it('takes the code only from a redirect carrying this login state', async () => {
    const loopback = await startLoopback('docs');
    try {
      expect(loopback.redirectUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
      const waiting = loopback.waitForCode(() => 'right-state', 10_000);
      expect(await get(`${loopback.redirectUrl}?code=forged&state=wrong-state`)).toBe(400);
      expect(
        await get(`${loopback.redirectUrl.replace('/callback', '/other')}?code=x&state=right-state`),
      ).toBe(404);
      expect(await get(`${loopback.redirectUrl}?code=the-code&state=right-state`)).toBe(200);
      await expect(waiting).resolves.toEqual({ code: 'the-code' });
      // Once done, later redirects are not taken.
      expect(await get(`${loopback.redirectUrl}?code=again&state=right-state`)).toBe(400);
    } finally {
      await loopback.close();
    }
  });

  it('fails with the error the authorization server sent', async () => {
    const loopback = await startLoopback('docs');
    try {
      const waiting = loopback.waitForCode(() => 's', 10_000);
      // Rejects while the redirect is being answered: a handler is attached before that.
      waiting.catch(() => {});
      expect(await get(`${loopback.redirectUrl}?error=access_denied&error_description=nope&state=s`)).toBe(
        400,
      );
      await expect(waiting).rejects.toThrow('the authorization server answered access_denied: nope');
    } finally {
      await loopback.close();
    }
  });

  it('gives up on timeout or cancel, and reuses a preferred port when it is free', async () => {
    const first = await startLoopback('docs');
    const port = first.port;
    await expect(first.waitForCode(() => 's', 50)).rejects.toThrow('no login within 0 s');
    await first.close();
    const second = await startLoopback('docs', port);
    try {
      expect(second.port).toBe(port);
      const stop = new AbortController();
      const waiting = second.waitForCode(() => 's', 10_000, stop.signal);
      stop.abort();
      await expect(waiting).rejects.toThrow('the login was cancelled');
      // The port is taken now: a third listener gets another one instead of failing.
      const third = await startLoopback('docs', port);
      expect(third.port).not.toBe(port);
      await third.close();
    } finally {
      await second.close();
    }
  });
});
