import { execFile } from 'node:child_process';
import { fstatSync, fsyncSync, mkdtempSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { buildSync } from 'esbuild';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { addAllowlistEntry, insertEntry } from './persist.ts';

const COMMENTED = `# rune configuration — hand written
model = "gpt-4o" # the model

# Policy: be careful here
[policy]
# commands I trust
allowed_commands = [
  "ls",   # listing
  "git status", # read-only git
]
mode = "confirm" # ask me
allowed_domains = ["api.github.com"] # only the API

[sandbox]
# strict on CI
mode = "auto"
`;

describe('insertEntry (pure text edit)', () => {
  it.each([
    ['an empty file', '', 'allowed_commands', 'df', '[policy]\nallowed_commands = ["df"]\n'],
    [
      'no [policy] table',
      'model = "m"\n',
      'allowed_commands',
      'df',
      'model = "m"\n\n[policy]\nallowed_commands = ["df"]\n',
    ],
    [
      'a table without the key',
      '[policy]\nmode = "confirm"\n',
      'allowed_commands',
      'df',
      '[policy]\nallowed_commands = ["df"]\nmode = "confirm"\n',
    ],
    [
      'an empty array',
      '[policy]\nallowed_commands = []\n',
      'allowed_commands',
      'df',
      '[policy]\nallowed_commands = ["df"]\n',
    ],
    [
      'a one-line array',
      '[policy]\nallowed_commands = ["ls"] # c\n',
      'allowed_commands',
      'df',
      '[policy]\nallowed_commands = ["ls", "df"] # c\n',
    ],
    [
      'a multi-line array without trailing comma',
      '[policy]\nallowed_commands = [\n  "ls" # x\n]\n',
      'allowed_commands',
      'df',
      '[policy]\nallowed_commands = [\n  "ls", # x\n  "df"\n]\n',
    ],
    [
      'a string with a bracket',
      '[policy]\nallowed_commands = ["a]b"]\n',
      'allowed_commands',
      'df',
      '[policy]\nallowed_commands = ["a]b", "df"]\n',
    ],
    [
      'a quote in the value',
      '[policy]\n',
      'allowed_paths_ro',
      '/x/"q"',
      '[policy]\nallowed_paths_ro = ["/x/\\"q\\""]\n',
    ],
  ])('%s', (_name, text, list, value, expected) => {
    const out = insertEntry(text, list as 'allowed_commands', value);
    expect(out).toBe(expected);
    expect(parse(out)).toBeTruthy();
  });

  it('keeps every comment, the order and unrelated keys of a commented file', () => {
    const out = insertEntry(COMMENTED, 'allowed_commands', 'df');
    const comments = (text: string) =>
      text
        .split('\n')
        .filter((line) => line.includes('#'))
        .map((l) => l.slice(l.indexOf('#')));
    expect(comments(out)).toEqual(comments(COMMENTED));
    expect(out).toContain('  "git status", # read-only git\n  "df",\n]');
    expect(out.replace('  "df",\n', '')).toBe(COMMENTED);
  });

  it('refuses dotted keys and inline tables instead of guessing', () => {
    expect(() => insertEntry('policy.mode = "confirm"\n', 'allowed_commands', 'df')).toThrow(/by hand/);
    expect(() => insertEntry('policy = { mode = "confirm" }\n', 'allowed_commands', 'df')).toThrow(/by hand/);
  });
});

describe('addAllowlistEntry (file, lock, atomic rename)', () => {
  it('adds to a commented rune.toml keeping every comment, and is idempotent', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'rune-persist-')), 'rune.toml');
    writeFileSync(file, COMMENTED);
    expect(addAllowlistEntry(file, 'allowed_domains', '*.example.com')).toBe(true);
    expect(addAllowlistEntry(file, 'allowed_domains', '*.example.com')).toBe(false);
    const text = readFileSync(file, 'utf8');
    expect(text).toBe(COMMENTED.replace('["api.github.com"]', '["api.github.com", "*.example.com"]'));
  });

  /** Every fsync made, in order: the path synced, whether it is a folder, and the file's text then. */
  function recordSyncs(file: string) {
    const syncs: Array<{ path: string; folder: boolean; text: string }> = [];
    const fsync = (fd: number) => {
      fsyncSync(fd);
      let text = '';
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        // Not there yet.
      }
      syncs.push({ path: readlinkSync(`/proc/self/fd/${fd}`), folder: fstatSync(fd).isDirectory(), text });
    };
    return { syncs, fsync };
  }

  it('"saved" is durable: the folder is fsynced after the rename, so a power cut cannot bring back the old file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rune-persist-'));
    const file = join(dir, 'rune.toml');
    writeFileSync(file, COMMENTED);
    const { syncs, fsync } = recordSyncs(file);
    expect(addAllowlistEntry(file, 'allowed_commands', 'df', { fsync })).toBe(true);
    // First the new text (the temp file), then the folder that now names it rune.toml.
    expect(syncs.map((s) => s.folder)).toEqual([false, true]);
    expect(syncs[0]!.path).toMatch(/\.rune\.toml\.tmp$/);
    expect(syncs[1]!.path).toBe(dir);
    expect(syncs[1]!.text).toContain('"df"');
  });

  it('folders it creates are made durable in their parents too', () => {
    const root = mkdtempSync(join(tmpdir(), 'rune-persist-'));
    const file = join(root, 'a', 'b', 'rune.toml');
    const { syncs, fsync } = recordSyncs(file);
    expect(addAllowlistEntry(file, 'allowed_commands', 'df', { fsync })).toBe(true);
    const folders = syncs.filter((s) => s.folder).map((s) => s.path);
    expect(folders).toEqual(expect.arrayContaining([root, join(root, 'a'), join(root, 'a', 'b')]));
    expect(syncs.at(-1)).toMatchObject({ path: join(root, 'a', 'b'), folder: true });
  });

  it('leaves an invalid file alone', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'rune-persist-')), 'rune.toml');
    writeFileSync(file, '[policy\n');
    expect(() => addAllowlistEntry(file, 'allowed_commands', 'df')).toThrow(/not valid TOML/);
    expect(readFileSync(file, 'utf8')).toBe('[policy\n');
  });

  it('two processes adding at the same time lose nothing', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'rune-persist-')), 'rune.toml');
    writeFileSync(file, COMMENTED);
    // Node 20 cannot run TypeScript, so the writer is bundled once and run as two real processes.
    const writer = join(dirname(file), 'writer.cjs');
    buildSync({
      stdin: {
        contents: `import { addAllowlistEntry } from ${JSON.stringify(fileURLToPath(new URL('./persist.ts', import.meta.url)))};
          const [file, prefix] = process.argv.slice(-2);
          for (let i = 0; i < 25; i++) addAllowlistEntry(file, 'allowed_commands', prefix + i);`,
        resolveDir: process.cwd(),
        loader: 'ts',
      },
      bundle: true,
      platform: 'node',
      format: 'cjs',
      outfile: writer,
      logLevel: 'error',
    });
    const run = promisify(execFile);
    const node = (prefix: string) => run(process.execPath, [writer, file, prefix]);
    await Promise.all([node('a'), node('b')]);
    const commands = (parse(readFileSync(file, 'utf8')) as { policy: { allowed_commands: string[] } }).policy
      .allowed_commands;
    expect(commands).toHaveLength(2 + 50);
    for (let i = 0; i < 25; i++) expect(commands).toEqual(expect.arrayContaining([`a${i}`, `b${i}`]));
    expect(readFileSync(file, 'utf8')).toContain('# commands I trust');
  });
});
