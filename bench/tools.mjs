// search_files over this repository's node_modules against `grep -rn` with the same pattern, side
// by side: interleaved runs of fresh processes, medians and ratios (goal: search_files ≤ 1.0 ×
// grep -rn). search_files runs as the tool runs it: its worker bundle, the walk threads confined by
// Landlock, a second thread where a core is idle (the load decides: the threads of the last run and
// the load average are printed). A second row runs it through the built binary (rune's start-up and
// one scripted model round included), when dist/rune exists.
//   node bench/tools.mjs [--rounds 10] [--dir node_modules]
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { buildSync } from 'esbuild';
import { interleave, median, percentile, ROOT, RUNE_BIN } from './lib.mjs';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '10' }, dir: { type: 'string', default: 'node_modules' } },
});
const rounds = Math.max(5, Number(values.rounds));
const target = resolve(ROOT, values.dir);
const work = mkdtempSync(join(tmpdir(), 'rune-bench-tools-'));

// The worker bundle, the native addon and a manifest, laid out as scripts/build.mjs lays out dist/assets.
const assets = join(work, 'assets');
const bundle = (options) =>
  buildSync({
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'error',
    ...options,
  });
bundle({
  entryPoints: [join(ROOT, 'src/tools/walk/worker.ts')],
  outfile: join(assets, 'js/walk-worker.cjs'),
});
const addon = join(ROOT, 'native/build/Release/rune_native.node');
if (!existsSync(addon)) {
  console.error(`${addon} is missing: run npm run build:native (or npm run build) first`);
  process.exit(2);
}
mkdirSync(join(assets, 'native'), { recursive: true });
copyFileSync(addon, join(assets, 'native/rune_native.node'));
writeFileSync(
  join(assets, 'manifest.json'),
  JSON.stringify({
    version: 'bench',
    sha256: { 'native/rune_native.node': createHash('sha256').update(readFileSync(addon)).digest('hex') },
  }),
);
const harness = join(work, 'search.cjs');
bundle({
  stdin: {
    contents: `
      import { devAssets } from './src/core/assets.ts';
      import { runWalkJob } from './src/tools/walk/runner.ts';
      devAssets.dir = process.env.ASSETS;
      const [root, pattern] = process.argv.slice(2);
      runWalkJob(
        { kind: 'search', root, cwd: root, pattern, caseInsensitive: false, context: 0, maxResults: 1000,
          protectedPaths: { floor: [], denied: [], unrestricted: false }, sandboxMode: 'auto' },
        { signal: new AbortController().signal, timeoutMs: 120000 },
      ).then((r) => {
        if (r.error || r.timedOut) { console.error(r.error ?? 'timed out'); process.exit(1); }
        const matches = r.files.reduce((n, f) => n + f.matches, 0);
        console.log(JSON.stringify({ matches, files: r.stats.files, stats: r.stats, layers: r.layers, threads: r.threads }));
      });`,
    resolveDir: ROOT,
    loader: 'ts',
  },
  outfile: harness,
});

const env = {
  PATH: '/usr/bin:/bin',
  HOME: work,
  RUNE_HOME: join(work, '.rune'),
  ASSETS: assets,
  LC_ALL: 'C.UTF-8',
};

function timed(cmd, args, check) {
  const start = process.hrtime.bigint();
  const result = spawnSync(cmd, args, { env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  check(result);
  return ms;
}

const lastSearch = {};
const grepCount = {};
function cases(pattern, grepFlags) {
  return {
    [`grep -rn${grepFlags} (baseline)`]: () =>
      timed('grep', [`-rn${grepFlags}`, pattern, target], (r) => {
        // 1: no match. 2 with output: unreadable entries (dangling links) are reported, not fatal.
        if (r.status !== 0 && r.status !== 1 && !r.stdout) throw new Error(`grep failed: ${r.stderr}`);
        grepCount[pattern] = r.stdout
          .split('\n')
          .filter((line) => line && !line.startsWith('Binary file')).length;
      }),
    // grep skipping binary files as search_files does (it still reads the files over 4 MiB).
    [`grep -rnI${grepFlags}`]: () =>
      timed('grep', [`-rnI${grepFlags}`, pattern, target], (r) => {
        if (r.status !== 0 && r.status !== 1 && !r.stdout) throw new Error(`grep failed: ${r.stderr}`);
      }),
    'search_files (worker + Landlock)': () =>
      timed(process.execPath, [harness, target, pattern], (r) => {
        if (r.status !== 0) throw new Error(`search failed: ${r.stderr}`);
        lastSearch[pattern] = JSON.parse(r.stdout);
      }),
  };
}

// Keep the files in the page cache for every case alike: one untimed pass each first (interleave warms up too).
console.log(`search over ${target}, ${rounds} interleaved rounds (fresh process per run)`);
for (const [pattern, grepFlags] of [
  ['createHash', ''],
  ['function\\s+\\w+Error', 'E'],
]) {
  const samples = interleave(cases(pattern, grepFlags), rounds);
  const names = Object.keys(samples);
  const base = median(samples[names[0]]);
  console.log(`\npattern /${pattern}/`);
  for (const name of names) {
    const m = median(samples[name]);
    const ratio = name === names[0] ? '(baseline)' : `ratio ${(m / base).toFixed(3)}`;
    console.log(
      `  ${name.padEnd(34)} median ${m.toFixed(0).padStart(6)} ms  p90 ${percentile(samples[name], 90).toFixed(0).padStart(6)} ms  ${ratio}`,
    );
  }
  const s = lastSearch[pattern];
  console.log(
    `  matching lines: grep ${grepCount[pattern]}, search_files ${s.matches} (files looked at ${s.files}; skipped ${s.stats.large} over 4 MiB, ${s.stats.binary} binary, ${s.stats.symlinks} symlinks, ${s.stats.ignored} ignored)`,
  );
  // Over the files search_files reads (text, at most 4 MiB) grep must find exactly the same lines.
  const same = spawnSync(
    'sh',
    [
      '-c',
      `find "$1" -type f -size -4097k -print0 | xargs -0 grep -nI${grepFlags} -e "$2" | wc -l`,
      'sh',
      target,
      pattern,
    ],
    { env, encoding: 'utf8' },
  );
  console.log(
    `  grep over the same files (text, ≤ 4 MiB): ${same.stdout.trim()} matching lines${Number(same.stdout) === s.matches ? ' (equal)' : ' (DIFFERENT)'}`,
  );
  console.log(
    `  walk threads (last run): ${s.threads}, load average ${loadavg()[0].toFixed(1)}; ${s.layers.map((l) => `${l.layer} ${l.applied ? 'applied' : 'not applied'} (${l.detail})`).join('; ')}`,
  );
}

// Through the built binary: rune's start-up, the policy, one scripted model round, the worker.
if (existsSync(RUNE_BIN)) {
  const MOCK = `
    const { createServer } = require('node:http');
    const { parentPort, workerData } = require('node:worker_threads');
    let n = 0;
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const request = JSON.parse(body);
        const first = !request.messages.some((m) => m.role === 'tool');
        const call = { id: 'c' + ++n, type: 'function', function: { name: 'search_files',
          arguments: JSON.stringify({ pattern: 'createHash', path: workerData, max_results: 1000 }) } };
        const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
        if (!request.stream) {
          const message = first ? { role: 'assistant', content: null, tool_calls: [call] } : { role: 'assistant', content: 'done' };
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ id: 'b', object: 'chat.completion', created: 0, model: 'm',
            choices: [{ index: 0, message, finish_reason: first ? 'tool_calls' : 'stop' }], usage }));
          return;
        }
        const chunk = (delta, finish = null) => 'data: ' + JSON.stringify({ id: 'b', object: 'chat.completion.chunk',
          created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] }) + '\\n\\n';
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        if (first) {
          res.write(chunk({ role: 'assistant', tool_calls: [{ index: 0, ...call }] }));
          res.write(chunk({}, 'tool_calls'));
        } else {
          res.write(chunk({ role: 'assistant', content: 'done' }));
          res.write(chunk({}, 'stop'));
        }
        res.write('data: ' + JSON.stringify({ id: 'b', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [], usage }) + '\\n\\n');
        res.end('data: [DONE]\\n\\n');
      });
    });
    server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));`;
  const worker = new Worker(MOCK, { eval: true, workerData: target });
  const port = await new Promise((done, fail) => {
    worker.once('message', done);
    worker.once('error', fail);
  });
  mkdirSync(join(work, '.rune'), { recursive: true });
  writeFileSync(join(work, '.rune/rune.toml'), `[policy]\nallowed_paths_ro = ["${ROOT}", "${target}"]\n`);
  const runeArgs = [
    '--base-url',
    `http://127.0.0.1:${port}/v1`,
    '--api-key',
    'sk-bench-0000',
    '--model',
    'm',
    '--json',
    'find createHash',
  ];
  const samples = interleave(
    {
      'grep -rn (baseline)': () => timed('grep', ['-rn', 'createHash', target], () => {}),
      'rune: one search_files call, end to end': () =>
        timed(RUNE_BIN, runeArgs, (r) => {
          const out = r.status === 0 ? JSON.parse(r.stdout) : undefined;
          if (out?.tool_calls[0]?.decision !== 'allow' || out.tool_calls[0]?.is_error) {
            throw new Error(`rune failed (exit ${r.status}): ${(r.stderr || r.stdout).slice(0, 500)}`);
          }
        }),
    },
    rounds,
  );
  const base = median(samples['grep -rn (baseline)']);
  console.log(`\nthrough ${RUNE_BIN} (pattern /createHash/)`);
  for (const [name, list] of Object.entries(samples)) {
    const m = median(list);
    console.log(
      `  ${name.padEnd(40)} median ${m.toFixed(0).padStart(6)} ms  ${name.includes('baseline') ? '(baseline)' : `ratio ${(m / base).toFixed(3)}`}`,
    );
  }
  await worker.terminate();
} else {
  console.log(`\n${RUNE_BIN} is missing: the end-to-end row needs npm run build`);
}
