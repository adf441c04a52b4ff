// The walk worker as the build ships it: bundled by esbuild from worker.ts next to the native addon
// and a manifest, the way scripts/build.mjs lays out dist/assets. Covers what only the worker does:
// the time limit that stops a regular expression backtracking for ever, cancellation, and the
// Landlock confinement of the worker's own thread (the second layer under the walk's own checks).
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { buildSync } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devAssets } from '../../core/assets.ts';
import { runeNative } from '../../sandbox/native.ts';
import type { SearchJob } from './job.ts';
import { runWalkJob, WORKER_ASSET } from './runner.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const ADDON = join(ROOT, 'native/build/Release/rune_native.node');
// The worker needs the native addon (npm run build:native; `npm test` builds it) and its Landlock
// case a kernel with Landlock: without either these cases are skipped, not faked.
const built = existsSync(ADDON);
const landlock = built && (runeNative().probe() as { landlockAbi: number }).landlockAbi > 0;

let assets: string;
const previous = { dir: undefined as string | undefined, home: process.env.RUNE_HOME };

function bundle(entry: string | { contents: string }, outfile: string): void {
  buildSync({
    ...(typeof entry === 'string'
      ? { entryPoints: [entry] }
      : { stdin: { ...entry, resolveDir: ROOT, loader: 'ts' } }),
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'error',
  });
}

beforeAll(() => {
  if (!built) return;
  assets = mkdtempSync(join(tmpdir(), 'rune-walk-assets-'));
  bundle(join(ROOT, 'src/tools/walk/worker.ts'), join(assets, WORKER_ASSET));
  mkdirSync(join(assets, 'native'));
  copyFileSync(ADDON, join(assets, 'native/rune_native.node'));
  const sha = createHash('sha256').update(readFileSync(ADDON)).digest('hex');
  writeFileSync(
    join(assets, 'manifest.json'),
    JSON.stringify({ version: 'test', sha256: { 'native/rune_native.node': sha } }),
  );
  previous.dir = devAssets.dir;
  devAssets.dir = assets;
  // The worker writes the addon into RUNE_HOME's cache, as rune does.
  process.env.RUNE_HOME = join(assets, 'rune-home');
});

afterAll(() => {
  devAssets.dir = previous.dir;
  if (previous.home === undefined) delete process.env.RUNE_HOME;
  else process.env.RUNE_HOME = previous.home;
});

function searchJob(root: string, pattern: string, over: Partial<SearchJob> = {}): SearchJob {
  return {
    kind: 'search',
    root,
    cwd: root,
    protectedPaths: { floor: [], denied: [], unrestricted: false },
    sandboxMode: 'auto',
    pattern,
    caseInsensitive: false,
    context: 0,
    maxResults: 100,
    ...over,
  };
}

describe.skipIf(!built)('the walk worker (needs the native addon: npm run build:native)', () => {
  it('stops a regular expression that backtracks for ever at the time limit, keeping what it found', async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'rune-redos-')));
    writeFileSync(join(root, 'a.txt'), 'hit\n');
    // Deep, so the worker holds a descriptor per folder when it is stopped.
    mkdirSync(join(root, 'd1/d2/d3/d4/d5'), { recursive: true });
    writeFileSync(join(root, 'd1/d2/d3/d4/d5/z.txt'), `${'a'.repeat(48)}!\n`);
    const before = readdirSync('/proc/self/fd').length;
    const result = await runWalkJob(searchJob(root, '(a|aa)+$|hit'), {
      signal: new AbortController().signal,
      timeoutMs: 1500,
    });
    expect(result.timedOut).toBe(true);
    expect(result.files.map((f) => f.path)).toEqual(['a.txt']);
    // What the terminated worker held through the addon was closed after it: nothing leaks.
    expect(readdirSync('/proc/self/fd').length).toBe(before);
  });

  it('stops when the call is cancelled', async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'rune-cancel-')));
    writeFileSync(join(root, 'z.txt'), `${'a'.repeat(48)}!\n`);
    const controller = new AbortController();
    const pending = runWalkJob(searchJob(root, '(a|aa)+$'), { signal: controller.signal, timeoutMs: 60_000 });
    setTimeout(() => controller.abort(), 300);
    const result = await pending;
    expect(result).toMatchObject({ cancelled: true, timedOut: false, files: [] });
  });

  it('two threads sharing a search answer what one thread answers: the same lines in walk order, cut at max_results', async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'rune-shares-')));
    // 3 files a folder in 20 folders; every third file matches (3 lines each), one file is binary.
    for (let d = 0; d < 20; d++) {
      mkdirSync(join(root, `d${d}`));
      for (let f = 0; f < 3; f++) {
        const hit = (d * 3 + f) % 3 === 1;
        writeFileSync(
          join(root, `d${d}`, `f${f}.txt`),
          hit ? 'a\nneedle 1\nb\nneedle 2\nneedle 3\nc\n' : 'nothing\n',
        );
      }
    }
    writeFileSync(join(root, 'd7/bin.dat'), Buffer.from([110, 101, 101, 100, 108, 101, 0]));
    const run = (shares: number, over: Partial<SearchJob>) =>
      runWalkJob(searchJob(root, 'needle', over), {
        signal: new AbortController().signal,
        timeoutMs: 30_000,
        shares,
      });
    for (const over of [
      {},
      { maxResults: 7, context: 1 },
      { maxResults: 9 },
      { maxResults: 200, context: 2 },
    ]) {
      const one = await run(1, over);
      const two = await run(2, over);
      expect(one.error).toBeUndefined();
      expect(one.files.length).toBeGreaterThan(0);
      expect({ files: two.files, stopped: two.stopped, error: two.error }).toEqual({
        files: one.files,
        stopped: one.stopped,
        error: undefined,
      });
      // A stopped walk counts what it looked at: the shares stop at different files.
      if (!one.stopped) expect(two.stats).toEqual(one.stats);
    }
    expect(
      (await run(2, { maxResults: 7, context: 1 })).files.flatMap((f) => f.lines.filter((l) => l.match)),
    ).toHaveLength(7);
  });

  it.skipIf(!landlock)('confines its thread with Landlock and reports the layer', async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'rune-ll-')));
    writeFileSync(join(root, 'a.txt'), 'needle\n');
    const result = await runWalkJob(searchJob(root, 'needle'), {
      signal: new AbortController().signal,
      timeoutMs: 30_000,
    });
    expect(result.error).toBeUndefined();
    expect(result.files).toHaveLength(1);
    expect(result.layers).toEqual([
      {
        layer: 'landlock',
        applied: true,
        detail: expect.stringMatching(/^walk thread: ABI \d+, read-only 1 path\(s\)$/),
      },
    ]);
  });

  it.skipIf(!landlock)(
    'the kernel refuses what the walk must never read, even if its own checks were bypassed',
    async () => {
      const base = realpathSync(mkdtempSync(join(tmpdir(), 'rune-ll2-')));
      const root = join(base, 'home');
      for (const [path, text] of Object.entries({
        'home/notes.txt': 'notes',
        'home/.ssh/id_rsa': 'KEY',
        'home/.config/gh/hosts.yml': 'token',
        'home/.config/nvim/init.lua': 'vim',
        'outside.txt': 'outside',
      })) {
        mkdirSync(join(base, path, '..'), { recursive: true });
        writeFileSync(join(base, path), text);
      }
      const script = join(assets, 'probe.cjs');
      bundle(
        {
          contents: `
            import { readFileSync, readdirSync } from 'node:fs';
            import { parentPort, workerData } from 'node:worker_threads';
            import { PathGuard } from './src/tools/walk/guard.ts';
            import { confineThread } from './src/tools/walk/thread-landlock.ts';
            const { root, floor } = workerData;
            const layers = confineThread(new PathGuard({ floor, denied: [], unrestricted: false }, root), root, 'strict');
            const tryRead = (path) => { try { return readFileSync(path, 'utf8'); } catch (e) { return e.code; } };
            const tryList = (path) => { try { return readdirSync(path).sort().join(','); } catch (e) { return e.code; } };
            parentPort.postMessage({
              layers,
              notes: tryRead(root + '/notes.txt'),
              nvim: tryRead(root + '/.config/nvim/init.lua'),
              key: tryRead(root + '/.ssh/id_rsa'),
              gh: tryRead(root + '/.config/gh/hosts.yml'),
              outside: tryRead(root + '/../outside.txt'),
              listHome: tryList(root),
              write: (() => { try { require('node:fs').writeFileSync(root + '/new.txt', 'x'); return 'written'; } catch (e) { return e.code; } })(),
            });`,
        },
        script,
      );
      const worker = new Worker(script, {
        workerData: { root, floor: [join(root, '.ssh'), join(root, '.config/gh')] },
      });
      const seen = await new Promise<Record<string, unknown>>((done, fail) => {
        worker.once('message', done);
        worker.once('error', fail);
      });
      await worker.terminate();
      expect(seen).toMatchObject({
        notes: 'notes',
        nvim: 'vim',
        key: 'EACCES',
        gh: 'EACCES',
        outside: 'EACCES',
        // Folders holding a protected entry may be listed, never read into.
        listHome: '.config,.ssh,notes.txt',
        write: 'EACCES',
      });
      // The main thread keeps its rights.
      expect(readFileSync(join(root, '.ssh/id_rsa'), 'utf8')).toBe('KEY');
    },
  );
});
