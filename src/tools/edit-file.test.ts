import {
  chmodSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { editFileTool } from './edit-file.ts';
import { callTool, toolContext } from './test-helpers.ts';

function workspace() {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'rune-edit-')));
  const cwd = join(home, 'project');
  mkdirSync(cwd);
  return { home, cwd, ctx: toolContext(cwd, home) };
}

describe('edit_file', () => {
  it('changes three lines of a 5,000-line file and returns the diff', async () => {
    const { cwd, ctx } = workspace();
    const lines = Array.from({ length: 5000 }, (_, i) => `line ${i + 1}: value = ${i * 7};`);
    writeFileSync(join(cwd, 'big.txt'), `${lines.join('\n')}\n`);
    const out = await callTool(
      'edit_file',
      {
        path: 'big.txt',
        edits: [
          {
            old_string: 'line 2500: value = 17493;\nline 2501: value = 17500;\nline 2502: value = 17507;',
            new_string: 'line 2500: CHANGED\nline 2501: CHANGED\nline 2502: CHANGED',
          },
        ],
      },
      ctx,
    );
    expect(out.isError, out.content).toBeFalsy();
    expect(out.content).toMatch(
      /^edited big\.txt: 1 replacement, \+3 -3 lines\n--- a\/big\.txt\n\+\+\+ b\/big\.txt\n@@ -2497,9 \+2497,9 @@/,
    );
    expect(out.content).toContain('-line 2501: value = 17500;\n');
    expect(out.content).toContain('+line 2501: CHANGED\n');
    const after = readFileSync(join(cwd, 'big.txt'), 'utf8').split('\n');
    expect(after).toHaveLength(5001);
    expect(after.slice(2498, 2503)).toEqual([
      'line 2499: value = 17486;',
      'line 2500: CHANGED',
      'line 2501: CHANGED',
      'line 2502: CHANGED',
      'line 2503: value = 17514;',
    ]);
  });

  it('ambiguous and missing matches explain themselves and leave the file untouched', async () => {
    const { cwd, ctx } = workspace();
    const file = join(cwd, 'a.ts');
    writeFileSync(file, 'let a = 1;\nlet b = 1;\nfunction go() {\n  return a + b;\n}\n');
    const before = statSync(file);
    const ambiguous = await callTool(
      'edit_file',
      { path: 'a.ts', edits: [{ old_string: '= 1;', new_string: '= 2;' }] },
      ctx,
    );
    expect(ambiguous).toMatchObject({ isError: true });
    expect(ambiguous.content).toMatch(/found 2 times \(at lines 1, 2\).*Nothing was changed/s);
    const missing = await callTool(
      'edit_file',
      {
        path: 'a.ts',
        edits: [
          { old_string: 'let a = 1;', new_string: 'let a = 5;' },
          { old_string: '  return a - b;', new_string: '  return 0;' },
        ],
      },
      ctx,
    );
    expect(missing.content).toMatch(
      /edit 2 of 2: old_string was not found .*most similar lines are 4-4:\n4\| {3}return a \+ b;/s,
    );
    expect(readFileSync(file, 'utf8')).toBe('let a = 1;\nlet b = 1;\nfunction go() {\n  return a + b;\n}\n');
    expect(statSync(file).mtimeMs).toBe(before.mtimeMs);
    expect(readdirSync(cwd)).toEqual(['a.ts']);
  });

  it('keeps CRLF line endings, the byte-order mark and the file mode', async () => {
    const { cwd, ctx } = workspace();
    const file = join(cwd, 'win.bat');
    writeFileSync(file, '\uFEFF@echo off\r\necho one\r\necho two\r\n');
    chmodSync(file, 0o750);
    const out = await callTool(
      'edit_file',
      {
        path: 'win.bat',
        edits: [{ old_string: 'echo one\necho two', new_string: 'echo one\necho 1.5\necho two' }],
      },
      ctx,
    );
    expect(out.isError, out.content).toBeFalsy();
    expect(readFileSync(file, 'utf8')).toBe('\uFEFF@echo off\r\necho one\r\necho 1.5\r\necho two\r\n');
    expect(statSync(file).mode & 0o7777).toBe(0o750);
  });

  it('two edits where the second depends on the first', async () => {
    const { cwd, ctx } = workspace();
    writeFileSync(join(cwd, 'x.py'), 'def old_name():\n    pass\n\nold_name()\n');
    const out = await callTool(
      'edit_file',
      {
        path: 'x.py',
        edits: [
          { old_string: 'def old_name():', new_string: 'def new_name():' },
          { old_string: 'def new_name():\n    pass', new_string: 'def new_name():\n    return 42' },
        ],
      },
      ctx,
    );
    expect(out.content).toMatch(/^edited x\.py: 2 replacements/);
    expect(readFileSync(join(cwd, 'x.py'), 'utf8')).toBe('def new_name():\n    return 42\n\nold_name()\n');
  });

  it('edits the target of a symlink and keeps the link', async () => {
    const { cwd, ctx } = workspace();
    writeFileSync(join(cwd, 'real.txt'), 'hello\n');
    symlinkSync('real.txt', join(cwd, 'link.txt'));
    await callTool(
      'edit_file',
      { path: 'link.txt', edits: [{ old_string: 'hello', new_string: 'bye' }] },
      ctx,
    );
    expect(lstatSync(join(cwd, 'link.txt')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(cwd, 'real.txt'), 'utf8')).toBe('bye\n');
  });

  it('refuses the floor (also through a symlink or a hard link), binary files and files over the cap', async () => {
    const { home, cwd, ctx } = workspace();
    mkdirSync(join(home, '.ssh'));
    writeFileSync(join(home, '.ssh/authorized_keys'), 'ssh-ed25519 AAAA me\n');
    symlinkSync(join(home, '.ssh/authorized_keys'), join(cwd, 'keys-link'));
    linkSync(join(home, '.ssh/authorized_keys'), join(cwd, 'keys-hard'));
    const edit = { old_string: 'me', new_string: 'attacker' };
    for (const path of ['~/.ssh/authorized_keys', 'keys-link', 'keys-hard']) {
      const out = await callTool('edit_file', { path, edits: [edit] }, ctx);
      expect(out, path).toMatchObject({ isError: true });
      expect(out.content).toMatch(/secrets floor|hard link/);
      expect(out.content).not.toContain('AAAA');
    }
    expect(readFileSync(join(home, '.ssh/authorized_keys'), 'utf8')).toBe('ssh-ed25519 AAAA me\n');

    writeFileSync(join(cwd, 'bin.dat'), Buffer.from([1, 0, 2, 3]));
    expect((await callTool('edit_file', { path: 'bin.dat', edits: [edit] }, ctx)).content).toMatch(
      /binary file/,
    );
    writeFileSync(join(cwd, 'huge.txt'), Buffer.alloc(5 * 1024 * 1024, 'a'));
    expect((await callTool('edit_file', { path: 'huge.txt', edits: [edit] }, ctx)).content).toMatch(
      /over edit_file's 4 MiB limit; use write_file/,
    );
  });

  it('creates a file from one edit with an empty old_string; otherwise a missing file is an error', async () => {
    const { cwd, ctx } = workspace();
    const created = await callTool(
      'edit_file',
      { path: 'new/dir/f.txt', edits: [{ old_string: '', new_string: 'hi\n' }] },
      ctx,
    );
    expect(created.content).toMatch(/^created new\/dir\/f\.txt \(3 bytes\)\n--- a\/new\/dir\/f\.txt/);
    expect(readFileSync(join(cwd, 'new/dir/f.txt'), 'utf8')).toBe('hi\n');
    const missing = await callTool(
      'edit_file',
      { path: 'nope.txt', edits: [{ old_string: 'a', new_string: 'b' }] },
      ctx,
    );
    expect(missing.content).toMatch(/does not exist; to create it, pass one edit with an empty old_string/);
  });

  it('the preview shows the diff without writing anything', async () => {
    const { cwd, ctx } = workspace();
    writeFileSync(join(cwd, 'p.txt'), 'one\ntwo\n');
    const preview = await editFileTool.preview!(
      { path: 'p.txt', edits: [{ old_string: 'two', new_string: 'TWO' }] },
      ctx,
    );
    expect(preview).toBe('--- a/p.txt\n+++ b/p.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO');
    expect(readFileSync(join(cwd, 'p.txt'), 'utf8')).toBe('one\ntwo\n');
    const failing = await editFileTool.preview!(
      { path: 'p.txt', edits: [{ old_string: 'zzz', new_string: 'x' }] },
      ctx,
    );
    expect(failing).toMatch(/^\(the edit cannot be applied: .*not found/);
  });

  it('rejects arguments in the wrong shape with a message the model can act on', async () => {
    const { ctx } = workspace();
    const out = await callTool('edit_file', { path: 'a', old_string: 'x', new_string: 'y' }, ctx);
    expect(out.content).toMatch(/edits: .*; unknown argument\(s\): old_string, new_string|unknown argument/);
  });
});

describe('edit_file under --unrestricted', () => {
  it('edits a protected file the call names, as the policy allowed it', async () => {
    const { home, cwd } = workspace();
    mkdirSync(join(home, '.ssh'));
    writeFileSync(join(home, '.ssh/config'), 'Host old\n');
    const ctx = toolContext(cwd, home, { mode: 'unrestricted' });
    const out = await callTool(
      'edit_file',
      { path: '~/.ssh/config', edits: [{ old_string: 'old', new_string: 'new' }] },
      ctx,
    );
    expect(out.isError, out.content).toBeFalsy();
    expect(readFileSync(join(home, '.ssh/config'), 'utf8')).toBe('Host new\n');
  });
});
