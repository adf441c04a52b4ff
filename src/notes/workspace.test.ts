// Where `rune notes` puts the chat agent's folders: never inside the policy's secrets floor.
import { existsSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chatWorkspace } from './index.ts';

const quiet = { warn() {} };

describe('chatWorkspace', () => {
  it('defaults to $XDG_DATA_HOME/rune/notes-workspace, outside RUNE_HOME', () => {
    const root = mkdtempSync(join(tmpdir(), 'rune-ws-'));
    const env = { HOME: join(root, 'home'), RUNE_HOME: join(root, 'rh'), XDG_DATA_HOME: join(root, 'data') };
    expect(chatWorkspace(undefined, env, quiet)).toBe(join(root, 'data', 'rune', 'notes-workspace'));
    expect(chatWorkspace(undefined, { ...env, XDG_DATA_HOME: undefined }, quiet)).toBe(
      join(root, 'home', '.local', 'share', 'rune', 'notes-workspace'),
    );
  });

  it('moves next to RUNE_HOME when HOME lies inside it', () => {
    const root = mkdtempSync(join(tmpdir(), 'rune-ws-'));
    const env = { HOME: join(root, 'rh', 'home'), RUNE_HOME: join(root, 'rh') };
    expect(chatWorkspace(undefined, env, quiet)).toBe(`${join(root, 'rh')}-notes-workspace`);
  });

  it('refuses a configured folder inside RUNE_HOME or reached through a link into it', () => {
    const root = mkdtempSync(join(tmpdir(), 'rune-ws-'));
    const env = { HOME: join(root, 'home'), RUNE_HOME: join(root, 'rh') };
    mkdirSync(env.RUNE_HOME);
    expect(() => chatWorkspace(join(root, 'rh', 'ws'), env, quiet)).toThrow(/secrets floor/);
    expect(existsSync(join(root, 'rh', 'ws'))).toBe(false);
    symlinkSync(env.RUNE_HOME, join(root, 'link'));
    expect(() => chatWorkspace(join(root, 'link', 'ws'), env, quiet)).toThrow(/secrets floor/);
    expect(() => chatWorkspace('~/.ssh/work', env, quiet)).toThrow(/\.ssh/);
    expect(chatWorkspace('~/notes-ws', env, quiet)).toBe(join(root, 'home', 'notes-ws'));
  });
});
