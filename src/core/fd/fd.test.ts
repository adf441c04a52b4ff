// The descriptor module against what a hostile command leaves behind: links on the way and at the
// end, FIFOs, sockets, dangling links, folders swapped for links, pinned grants replaced. Each
// case runs with openat2, with the O_NOFOLLOW walk and with the /proc form.
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createFile,
  Grants,
  makeFolder,
  PathRefused,
  Root,
  removeEntry,
  removeFolderAt,
  removeTree,
  renameWithin,
  replaceFile,
  useResolution,
} from './index.ts';
import { fdSys, OpenedStat } from './sys.ts';

const O_DIRECTORY = 0o200000;

let base = '';
let outside = '';
let inside = '';

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'rune-fd-'));
  outside = join(base, 'outside');
  inside = join(base, 'grant');
  mkdirSync(outside);
  mkdirSync(join(inside, 'sub'), { recursive: true });
  writeFileSync(join(outside, 'secret'), 'SECRET\n');
  writeFileSync(join(inside, 'sub', 'ok.txt'), 'ok\n');
});

afterAll(() => {
  useResolution('auto');
});

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(PathRefused);
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}

const modes = ['auto', 'walk', 'proc'] as const;

describe.each(modes)('src/core/fd (%s)', (mode) => {
  beforeEach(() => {
    useResolution(mode);
  });

  it('reads a regular file; refuses a link on the way and at the end, naming it', () => {
    const root = Root.open(inside);
    expect(root.readFile('sub/ok.txt').bytes.toString()).toBe('ok\n');
    symlinkSync(outside, join(inside, 'l'));
    symlinkSync(join(outside, 'secret'), join(inside, 'sub', 'f'));
    expect(refusal(() => root.readFile('l/secret'))).toBe(`${join(inside, 'l')} is a symbolic link: refused`);
    expect(refusal(() => root.readFile('sub/f'))).toBe(
      `${join(inside, 'sub/f')} is a symbolic link: refused`,
    );
    expect(root.readText('sub/f')).toBeNull();
    root.close();
  });

  it('refuses a FIFO without blocking, a socket, a device and a dangling link', async () => {
    execFileSync('mkfifo', [join(inside, 'fifo')]);
    const server = createServer();
    await new Promise<void>((done) => server.listen(join(inside, 'sock'), done));
    symlinkSync(join(outside, 'absent'), join(inside, 'dangling'));
    const root = Root.open(inside);
    expect(refusal(() => root.readFile('fifo'))).toBe(`${join(inside, 'fifo')} is a FIFO: refused`);
    expect(refusal(() => root.readFile('sock'))).toMatch(/is a socket: refused$/);
    expect(refusal(() => Root.system().readFile('dev/null'))).toBe(
      '/dev/null is a character device: refused',
    );
    expect(refusal(() => root.readFile('dangling'))).toMatch(/dangling is a symbolic link: refused$/);
    expect(refusal(() => root.readFile('sub'))).toMatch(/sub is a folder: refused$/);
    server.close();
  });

  it('opens one entry to read without following a link or blocking on a FIFO; reads from the start and closes', () => {
    const sys = fdSys();
    execFileSync('mkfifo', [join(inside, 'fifo')]);
    symlinkSync(join(outside, 'secret'), join(inside, 'link'));
    writeFileSync(join(inside, 'text'), 'hello world');
    writeFileSync(join(inside, 'binary'), Buffer.concat([Buffer.from('ab\0cd'), Buffer.alloc(20, 65)]));
    const slash = openSync('/', O_DIRECTORY);
    const dir = sys.resolve(slash, inside.slice(1), O_DIRECTORY);
    closeSync(slash);
    const stat = new Float64Array(OpenedStat.length);
    const buffer = Buffer.alloc(64);
    try {
      const fifo = sys.openRead(dir, 'fifo', stat);
      expect(stat[OpenedStat.mode]! & 0o170000).toBe(0o010000);
      sys.close(fifo);
      expect(() => sys.openRead(dir, 'link', stat)).toThrow(expect.objectContaining({ code: 'ELOOP' }));
      expect(() => sys.openRead(dir, '../outside', stat)).toThrow(
        expect.objectContaining({ code: 'EINVAL' }),
      );
      const text = sys.openRead(dir, 'text', stat);
      expect(stat[OpenedStat.size]).toBe(11);
      expect(buffer.subarray(0, sys.readClose(text, buffer, 11, 4)).toString()).toBe('hello world');
      // Closed: the descriptor is gone.
      expect(existsSync(`/proc/self/fd/${text}`)).toBe(false);
      // A NUL among the first `sniff` bytes: the rest is not read.
      const binary = sys.openRead(dir, 'binary', stat);
      expect(sys.readClose(binary, buffer, stat[OpenedStat.size]!, 8)).toBe(8);
    } finally {
      sys.close(dir);
    }
  });

  it('creates with O_EXCL: a dangling link is not followed into creating its target', () => {
    symlinkSync(join(outside, 'planted'), join(inside, 'new'));
    const root = Root.open(inside);
    expect(() => createFile(root, 'new', 'x')).toThrow(/EEXIST/);
    expect(existsSync(join(outside, 'planted'))).toBe(false);
    createFile(root, 'fresh', 'x');
    expect(readFileSync(join(inside, 'fresh'), 'utf8')).toBe('x');
  });

  it('replaces a file by rename in its folder; a link or FIFO is refused, or replaced itself', () => {
    const root = Root.open(inside);
    writeFileSync(join(inside, 'sub', 'run.sh'), 'old');
    execFileSync('chmod', ['755', join(inside, 'sub', 'run.sh')]);
    replaceFile(root, 'sub/run.sh', 'new');
    expect(readFileSync(join(inside, 'sub', 'run.sh'), 'utf8')).toBe('new');
    expect(lstatSync(join(inside, 'sub', 'run.sh')).mode & 0o777).toBe(0o755);
    symlinkSync(join(outside, 'secret'), join(inside, 'link'));
    expect(refusal(() => replaceFile(root, 'link', 'evil'))).toMatch(/link is a symbolic link: refused$/);
    replaceFile(root, 'link', 'plain', { over: 'any' });
    expect(lstatSync(join(inside, 'link')).isFile()).toBe(true);
    expect(readFileSync(join(outside, 'secret'), 'utf8')).toBe('SECRET\n');
    renameSync(join(inside, 'sub'), join(base, 'moved'));
    symlinkSync(outside, join(inside, 'sub'));
    expect(refusal(() => replaceFile(root, 'sub/secret', 'evil'))).toMatch(
      /sub is a symbolic link: refused$/,
    );
    expect(readFileSync(join(outside, 'secret'), 'utf8')).toBe('SECRET\n');
    expect(() => replaceFile(root, 'sub2/x/y', 'z', { parents: true })).not.toThrow();
    expect(readFileSync(join(inside, 'sub2/x/y'), 'utf8')).toBe('z');
  });

  it('refuses a replacement when the file changed since it was read', () => {
    const root = Root.open(inside);
    const { entry } = root.readFile('sub/ok.txt');
    writeFileSync(join(inside, 'sub', 'ok.txt'), 'someone else\n');
    expect(refusal(() => replaceFile(root, 'sub/ok.txt', 'mine', { unchanged: entry }))).toMatch(
      /changed while/,
    );
  });

  it('makes folders one at a time, never through a link', () => {
    symlinkSync(outside, join(inside, 'l'));
    const root = Root.open(inside);
    expect(refusal(() => makeFolder(root, 'l/x', { parents: true }))).toMatch(
      /l is a symbolic link: refused$/,
    );
    expect(existsSync(join(outside, 'x'))).toBe(false);
    makeFolder(root, 'a/b/c', { parents: true });
    expect(lstatSync(join(inside, 'a/b/c')).isDirectory()).toBe(true);
  });

  it('removes a tree without following a link or crossing into another folder', () => {
    mkdirSync(join(inside, 'tmp/deep/er'), { recursive: true });
    writeFileSync(join(inside, 'tmp/deep/er/f'), 'f');
    symlinkSync(outside, join(inside, 'tmp/deep/to-outside'));
    symlinkSync(join(outside, 'secret'), join(inside, 'tmp/secret-link'));
    execFileSync('mkfifo', [join(inside, 'tmp/fifo')]);
    const root = Root.open(inside);
    expect(removeTree(root, 'tmp')).toEqual([]);
    expect(existsSync(join(inside, 'tmp'))).toBe(false);
    expect(readFileSync(join(outside, 'secret'), 'utf8')).toBe('SECRET\n');
    symlinkSync(outside, join(inside, 'gone'));
    expect(removeTree(root, 'gone')).toEqual([]);
    expect(existsSync(join(outside, 'secret'))).toBe(true);
    // By absolute path (rune's own temporary folders), through a link to the parent too.
    mkdirSync(join(inside, 'own/sub'), { recursive: true });
    symlinkSync(outside, join(inside, 'own/sub/to-outside'));
    symlinkSync(inside, join(base, 'grant-link'));
    expect(removeFolderAt(join(base, 'grant-link', 'own'))).toEqual([]);
    expect(existsSync(join(inside, 'own'))).toBe(false);
    expect(readFileSync(join(outside, 'secret'), 'utf8')).toBe('SECRET\n');
    expect(removeFolderAt(join(base, 'missing', 'own'))[0]).toMatch(/missing\/own: /);
  });

  it('renames within the folder, refusing to replace when asked, and removes a link itself', () => {
    const root = Root.open(inside);
    writeFileSync(join(inside, 'a'), 'a');
    writeFileSync(join(inside, 'b'), 'b');
    if (mode !== 'proc') expect(() => renameWithin(root, 'a', 'b', { noReplace: true })).toThrow(/EEXIST/);
    renameWithin(root, 'a', 'sub/a');
    expect(readFileSync(join(inside, 'sub/a'), 'utf8')).toBe('a');
    symlinkSync(join(outside, 'secret'), join(inside, 'l'));
    removeEntry(root, 'l');
    expect(existsSync(join(outside, 'secret'))).toBe(true);
    expect(refusal(() => removeEntry(root, 'sub'))).toMatch(/sub is a folder: refused$/);
  });

  it('pins grants: a granted folder replaced by a link or by another folder is refused', () => {
    const grants = new Grants();
    const sub = join(inside, 'sub');
    expect(grants.pin(sub)).toBe(sub);
    expect(grants.locate(join(sub, 'ok.txt')).rel).toBe('ok.txt');
    renameSync(sub, join(base, 'away'));
    symlinkSync(outside, sub);
    expect(refusal(() => grants.pin(sub))).toMatch(
      /granted folder .*sub was replaced during the run \(it now leads to .*outside\): refused/,
    );
    expect(refusal(() => grants.locate(join(sub, 'secret')))).toMatch(/replaced during the run/);
    rmSync(sub);
    mkdirSync(sub);
    expect(refusal(() => grants.pin(sub))).toMatch(/another folder is there now/);
    // Paths outside every grant are resolved from '/', through no link.
    expect(grants.locate(join(outside, 'secret')).root.path).toBe('/');
    grants.close();
  });

  it('pins a granted file: a new file by its name is the grant, a link or folder in its place is not', () => {
    const grants = new Grants();
    const file = join(inside, 'granted.txt');
    writeFileSync(file, '');
    expect(grants.pin(file)).toBe(file);
    rmSync(file);
    writeFileSync(file, 'made again');
    expect(grants.pin(file)).toBe(file);
    rmSync(file);
    symlinkSync(join(outside, 'secret'), file);
    expect(refusal(() => grants.pin(file))).toMatch(/granted file .*granted.txt was replaced during the run/);
    rmSync(file);
    mkdirSync(file);
    expect(refusal(() => grants.pin(file))).toMatch(/another folder is there now/);
    grants.close();
  });

  it('refuses a pinned folder that moved, and paths that climb out', () => {
    const root = Root.open(join(inside, 'sub'));
    root.verify();
    renameSync(join(inside, 'sub'), join(inside, 'other'));
    expect(refusal(() => root.verify())).toMatch(/sub moved during the call/);
    expect(refusal(() => root.readFile('../x'))).toMatch(/not a path inside the folder/);
    expect(refusal(() => Root.open(`${base}/nope/../grant`))).toMatch(/not a path inside the folder/);
  });
});
