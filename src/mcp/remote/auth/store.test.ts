import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { redact } from '../../../core/redact.ts';
import { authDir, authFileName, otherLogins, TokenStore } from './store.ts';

const URL_A = 'https://mcp.example.com/mcp';
const home = () => ({ RUNE_HOME: mkdtempSync(join(tmpdir(), 'rune-auth-')) });
const tokens = {
  access_token: 'at-secret-0123456789',
  refresh_token: 'rt-secret-9876543210',
  token_type: 'bearer',
  expires_in: 60,
};

describe('TokenStore', () => {
  it('keeps tokens in a 0600 file in a 0700 folder, and nothing else behind', () => {
    const env = home();
    const store = new TokenStore(env, 'docs', URL_A);
    store.saveClient(
      { client_id: 'c1', redirect_uris: ['http://127.0.0.1:5/callback'] },
      'http://127.0.0.1:5/callback',
    );
    store.saveTokens(tokens);
    expect(statSync(authDir(env)).mode & 0o777).toBe(0o700);
    expect(statSync(store.file).mode & 0o777).toBe(0o600);
    expect(readdirSync(authDir(env))).toEqual([authFileName(URL_A)]);
    expect(authFileName(URL_A)).toMatch(/^mcp\.example\.com-[0-9a-f]{16}\.json$/);
    const again = new TokenStore(env, 'docs', URL_A);
    expect(again.tokens).toEqual(tokens);
    expect(again.redirectUri).toBe('http://127.0.0.1:5/callback');
  });

  it('registers the tokens as secrets, so no output can show them', () => {
    const store = new TokenStore(home(), 'docs', URL_A);
    store.saveTokens({ ...tokens, access_token: 'at-only-here-5566778899' });
    expect(redact('token at-only-here-5566778899 and rt-secret-9876543210')).toBe(
      'token [REDACTED] and [REDACTED]',
    );
  });

  it('never hands tokens stored for another URL to this one', () => {
    const env = home();
    new TokenStore(env, 'docs', URL_A).saveTokens(tokens);
    expect(new TokenStore(env, 'docs', 'https://attacker.example.net/mcp').tokens).toBeUndefined();
    expect(new TokenStore(env, 'docs', URL_A).tokens).toEqual(tokens);
  });

  it('keys logins by server URL: the same name at two URLs keeps both, neither touches the other', () => {
    const env = home();
    const URL_B = 'https://other.example.org/mcp';
    new TokenStore(env, 'docs', URL_A).saveTokens(tokens);
    const other = { ...tokens, access_token: 'at-other-0011223344', refresh_token: 'rt-other-5566778899' };
    // A table named docs at another URL: discovery, then a login of its own.
    const b = new TokenStore(env, 'docs', URL_B);
    expect(b.tokens).toBeUndefined();
    b.saveDiscovery({ authorizationServerUrl: 'https://other.example.org' });
    b.saveTokens(other);
    expect(new TokenStore(env, 'docs', URL_A).tokens).toEqual(tokens);
    expect(new TokenStore(env, 'docs', URL_B).tokens).toEqual(other);
    expect(readdirSync(authDir(env)).sort()).toEqual([authFileName(URL_A), authFileName(URL_B)].sort());
    expect(otherLogins(env, 'docs', URL_B)).toEqual([
      { url: URL_A, names: ['docs'], file: join(authDir(env), authFileName(URL_A)) },
    ]);
    // Logging out of one forgets that one only.
    new TokenStore(env, 'docs', URL_B).remove();
    expect(new TokenStore(env, 'docs', URL_A).tokens).toEqual(tokens);
  });

  it('takes over a NAME.json of the same URL from before, and leaves one of another URL alone', () => {
    const env = home();
    const dir = authDir(env);
    const legacy = (url: string) => JSON.stringify({ version: 1, server_url: url, tokens });
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, 'docs.json'), legacy(URL_A), { mode: 0o600 });
    writeFileSync(join(dir, 'wiki.json'), legacy('https://wiki.example.org/mcp'), { mode: 0o600 });
    expect(new TokenStore(env, 'docs', URL_A).tokens).toEqual(tokens);
    const stranger = new TokenStore(env, 'wiki', URL_A);
    stranger.saveDiscovery({ authorizationServerUrl: 'https://mcp.example.com' });
    expect(readdirSync(dir).sort()).toEqual([authFileName(URL_A), 'wiki.json'].sort());
    expect(JSON.parse(readFileSync(join(dir, 'wiki.json'), 'utf8')).tokens).toEqual(tokens);
  });

  it('never overwrites a file that holds another server’s login', () => {
    const env = home();
    const store = new TokenStore(env, 'docs', URL_A);
    store.saveTokens(tokens);
    writeFileSync(
      store.file,
      JSON.stringify({ version: 1, server_url: 'https://else.example.net/mcp', tokens }),
    );
    expect(() => store.saveTokens(tokens)).toThrow(
      /holds the MCP login of https:\/\/else\.example\.net\/mcp/,
    );
  });

  it('knows when the access token expired, from expires_in at the time it was saved', () => {
    let now = 1_000_000_000_000;
    const store = new TokenStore(home(), 'docs', URL_A, () => now);
    store.saveTokens(tokens);
    expect(store.expired()).toBe(false);
    now += 31_000;
    expect(store.expired()).toBe(true);
  });

  it('forgets what the SDK invalidates, and logout removes the file', () => {
    const env = home();
    const store = new TokenStore(env, 'docs', URL_A);
    store.saveClient({ client_id: 'c1' }, undefined);
    store.saveTokens(tokens);
    store.invalidate('tokens');
    expect(new TokenStore(env, 'docs', URL_A).tokens).toBeUndefined();
    expect(new TokenStore(env, 'docs', URL_A).client).toEqual({ client_id: 'c1' });
    expect(store.remove()).toBe(true);
    expect(readdirSync(authDir(env))).toEqual([]);
    expect(store.remove()).toBe(false);
  });

  it('tightens a file others could read, and treats a damaged one as no login', () => {
    const env = home();
    const store = new TokenStore(env, 'docs', URL_A);
    store.saveTokens(tokens);
    chmodSync(store.file, 0o644);
    expect(new TokenStore(env, 'docs', URL_A).tokens).toEqual(tokens);
    expect(statSync(store.file).mode & 0o777).toBe(0o600);
    writeFileSync(store.file, '{ not json');
    expect(new TokenStore(env, 'docs', URL_A).tokens).toBeUndefined();
    expect(readFileSync(store.file, 'utf8')).toBe('{ not json');
  });

  it('keeps the tokens another rune refreshed meanwhile instead of deleting them', () => {
    const env = home();
    const first = new TokenStore(env, 'docs', URL_A);
    first.saveClient({ client_id: 'c1' }, undefined);
    first.saveTokens(tokens);
    const second = new TokenStore(env, 'docs', URL_A);
    const rotated = {
      ...tokens,
      access_token: 'at-rotated-1122334455',
      refresh_token: 'rt-rotated-5544332211',
    };
    first.saveTokens(rotated);
    // The second one's refresh was refused (its refresh token was rotated away): the SDK invalidates.
    second.invalidate('tokens');
    expect(second.tokens).toEqual(rotated);
    expect(new TokenStore(env, 'docs', URL_A).tokens).toEqual(rotated);
    // Without a newer login on disk, invalidating does forget the tokens.
    second.invalidate('tokens');
    expect(new TokenStore(env, 'docs', URL_A).tokens).toBeUndefined();
    expect(new TokenStore(env, 'docs', URL_A).client).toEqual({ client_id: 'c1' });
  });
});
