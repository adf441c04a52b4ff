// How checkpoints read: diffs per file (text, binary, links, modes, renames), control characters
// from file content made visible, and the turn list.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CheckpointStore, sha256Hex } from '../agent/checkpoints/store.ts';
import type { Change, Held } from '../agent/checkpoints/types.ts';
import { changeLines, changesDiff, pairRenames, turnLines, visible } from './checkpoint-view.ts';

const home = mkdtempSync(join(tmpdir(), 'rune-view-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const store = CheckpointStore.open({ RUNE_HOME: home }, 'view', {
  create: true,
  limits: { room: () => true },
});
const plain = { color: false };

function file(text: string | Buffer, m = 0o644): Held {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  const h = sha256Hex(bytes);
  store.putBlob(h, bytes);
  return { k: 'f', m, z: bytes.length, h };
}
const change = (p: string, was: Held | null, now: Held | null): Change => ({
  p: `/w/${p}`,
  r: '/w',
  was,
  now,
});

describe('the diff of a session', () => {
  it('shows text as a unified diff, binary files by size, links and modes in words', () => {
    const text = changesDiff(
      store,
      [
        change('a.txt', file('one\ntwo\n'), file('one\nthree\n')),
        change('b.bin', null, file(Buffer.from([0, 1, 2]))),
        change('l', null, { k: 'l', m: 0o777, t: '/etc/passwd' }),
        change('x.sh', file('run\n'), file('run\n', 0o755)),
      ],
      '/w',
      plain,
    );
    expect(text).toContain('modified: a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+three');
    expect(text).toContain('new: b.bin\n  binary file: 0 → 3 bytes');
    expect(text).toContain('new: l\n  nothing → a link to /etc/passwd');
    expect(text).toContain('mode changed: x.sh\n  mode 644 → 755\n');
    expect(text).not.toContain('--- a/x.sh');
  });

  it('shows a rename as one line', () => {
    const moved = file('moved content\n');
    const changes = [change('old.txt', moved, null), change('new.txt', null, moved)];
    expect(pairRenames(changes).renames).toHaveLength(1);
    expect(changesDiff(store, changes, '/w', plain)).toBe('renamed: old.txt → new.txt\n');
  });

  it('never sends control characters from a file to the terminal', () => {
    const text = changesDiff(
      store,
      [change('evil.txt', null, file('\x1b]52;c;aGk=\x07\x1b[2J\n'))],
      '/w',
      plain,
    );
    expect(text).not.toMatch(/[\x1b\x07]/);
    expect(text).toContain('+\\x1b]52;c;aGk=\\x07\\x1b[2J');
    expect(visible('a\tb\x9bc')).toBe('a\tb\\x9bc');
  });

  it('lists changes and turns', () => {
    expect(changeLines([change('n', null, file('x')), change('d', file('y'), null)], '/w', plain)).toEqual([
      'A n',
      'D d',
    ]);
    const turn = {
      n: 2,
      at: '2026-01-01T10:20:30.000Z',
      prompt: 'do it',
      messages: 0,
      digest: '',
      undone: false,
    };
    const calls = [
      {
        id: 'c',
        turn: 2,
        tool: 'execute_cmd',
        roots: [],
        files: [],
        done: true,
        partial: [],
        changes: [change('n', null, file('x'))],
      },
    ];
    expect(turnLines([{ ...turn, calls }], plain)).toEqual(['    2  10:20    1 file   do it']);
  });
});
