import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { moveAsideCreated, watchAbsent } from './absent.ts';

const made: string[] = [];
function folder(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'rune-absent-')));
  made.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('watchAbsent', () => {
  it.each([
    // [what exists, watched path, expected top (undefined: not watched)]
    [[], '.ssh', '.ssh'],
    [[], '.config/git/config', '.config'],
    [['.config/'], '.config/git/config', '.config/git'],
    [['.config/git/'], '.config/git/config', '.config/git/config'],
    [['.ssh/'], '.ssh', undefined],
  ] as const)('with %j, %s is watched from %s', (existing, path, top) => {
    const root = folder();
    for (const entry of existing) mkdirSync(join(root, entry), { recursive: true });
    const watched = watchAbsent([join(root, path)], [root]);
    expect(watched).toEqual(top ? [{ path: join(root, path), top: join(root, top) }] : []);
  });

  it('ignores paths outside the roots and the roots themselves', () => {
    const root = folder();
    expect(watchAbsent([join(folder(), '.ssh'), root], [root])).toEqual([]);
  });
});

describe('moveAsideCreated', () => {
  it('moves aside the topmost part the call created, once, and leaves what was not created', () => {
    const root = folder();
    const watched = watchAbsent(
      [join(root, '.ssh'), join(root, '.config/git/config'), join(root, '.aws')],
      [root],
    );
    mkdirSync(join(root, '.ssh'));
    writeFileSync(join(root, '.ssh', 'authorized_keys'), 'key\n');
    mkdirSync(join(root, '.config', 'git'), { recursive: true });
    writeFileSync(join(root, '.config', 'git', 'config'), '[core]\n');
    writeFileSync(join(root, '.ssh.rune-rejected'), 'taken');
    const actions = moveAsideCreated(watched);
    expect(actions).toHaveLength(2);
    expect(existsSync(join(root, '.ssh'))).toBe(false);
    expect(readFileSync(join(root, '.ssh.rune-rejected-2', 'authorized_keys'), 'utf8')).toBe('key\n');
    expect(existsSync(join(root, '.config'))).toBe(false);
    expect(existsSync(join(root, '.config.rune-rejected', 'git', 'config'))).toBe(true);
  });

  it('never renames through a folder the command swapped for a link', () => {
    const root = folder();
    const elsewhere = folder();
    mkdirSync(join(root, '.config'));
    const watched = watchAbsent([join(root, '.config/git/config')], [root]);
    rmSync(join(root, '.config'), { recursive: true });
    mkdirSync(join(elsewhere, 'git'));
    writeFileSync(join(elsewhere, 'git', 'config'), '[core]\n');
    symlinkSync(elsewhere, join(root, '.config'));
    const actions = moveAsideCreated(watched);
    expect(actions[0]).toMatch(/created through a link/);
    expect(existsSync(join(elsewhere, 'git', 'config'))).toBe(true);
  });
});
