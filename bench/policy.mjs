// Cost of one policy decision inside a running rune: a read_file check (canonicalisation + audit
// line) is the baseline; execute_cmd adds the shell parse, the programs' rules and a path check per
// word. Then single decisions of long lines, each the longest a run loop waits on one call (ADR
// 0037 bounds a line to 32 KiB and 512 paths), and the first decision of a fresh
// process (it loads the parser). Medians of interleaved runs, as ratios.
//   node bench/policy.mjs [--rounds 2000] [--before CHECKOUT]
// --before runs the same cases on another checkout (its src/ and node_modules/, e.g. a worktree of
// main) side by side: the ratios then compare the two.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { buildSync } from 'esbuild';
import { median, percentile, ROOT } from './lib.mjs';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '2000' }, before: { type: 'string' } },
});
const rounds = Math.max(200, Number(values.rounds));
const work = mkdtempSync(join(tmpdir(), 'rune-bench-policy-'));

/** 20 commands of 10 words: a long line a model writes. */
const LINE_200 = Array.from(
  { length: 20 },
  (_, index) => `grep -n -e foo${index} -e 'bar baz' a.txt b.txt src/c${index}.ts ${index % 2 ? '|' : '&&'}`,
)
  .join(' ')
  .concat(' ls');
const words = (count) => `ls ${Array.from({ length: count - 1 }, (_, index) => `w${index}`).join(' ')}`;
// The most a line may make the gate resolve (512 paths), the longest line it reads (32 KiB, here
// more paths than that: refused after the parse), and one far longer (refused unread).
const LONG = { 'execute_cmd: 512 paths': words(512), 'execute_cmd: 4,500 words (32 KiB)': words(4500) };
const HUGE = { 'execute_cmd: 100,000 words': words(100_000) };

/** What each execute_cmd tool declares it reaches (src/tools/definitions.json); older checkouts ignore it. */
const COMMAND = { kind: 'command' };

/** Points the checkout's readAsset() at `assets`: through devAssets where it has one, else the older global. */
function assetDir(root, assets) {
  const module = join(root, 'src/core/assets.ts');
  return existsSync(module) && readFileSync(module, 'utf8').includes('export const devAssets')
    ? `import { devAssets } from ${JSON.stringify(module)}; devAssets.dir = ${JSON.stringify(assets)};`
    : `globalThis.__runeAssetDir = ${JSON.stringify(assets)};`;
}

/** A bench script for the checkout at `root`, bundled from its own sources and packages. */
function bundle(root, name) {
  const require = createRequire(join(root, 'package.json'));
  const assets = join(work, `${name}-assets`);
  const alias = {};
  // A checkout from before ADR 0037 parses with tree-sitter: its wasm files where readAsset() looks.
  if (existsSync(join(root, 'node_modules/web-tree-sitter'))) {
    mkdirSync(join(assets, 'wasm'), { recursive: true });
    copyFileSync(require.resolve('web-tree-sitter/tree-sitter.wasm'), join(assets, 'wasm/tree-sitter.wasm'));
    copyFileSync(
      join(dirname(require.resolve('tree-sitter-bash/package.json')), 'tree-sitter-bash.wasm'),
      join(assets, 'wasm/tree-sitter-bash.wasm'),
    );
    alias['web-tree-sitter'] = require.resolve('web-tree-sitter');
  }
  const script = join(work, `${name}.cjs`);
  const cases = {
    'read_file (baseline)': {
      tool: 'read_file',
      args: { path: 'a.txt' },
      source: 'builtin',
      access: { kind: 'read', target: 'file' },
    },
    'execute_cmd: ls -la': {
      tool: 'execute_cmd',
      args: { cmd: 'ls -la' },
      source: 'builtin',
      access: COMMAND,
    },
    'execute_cmd: ls -la | grep x': {
      tool: 'execute_cmd',
      args: { cmd: 'ls -la | grep x' },
      source: 'builtin',
      access: COMMAND,
    },
    'execute_cmd: 5-command list': {
      tool: 'execute_cmd',
      args: { cmd: "git log --oneline -n 20 && rg -n 'foo|bar' src | head -5; ls -la src; grep -c x a.txt" },
      source: 'builtin',
      access: COMMAND,
    },
    'execute_cmd: 200 words': {
      tool: 'execute_cmd',
      args: { cmd: LINE_200 },
      source: 'builtin',
      access: COMMAND,
    },
  };
  buildSync({
    stdin: {
      contents: `
        import { createPolicyGate } from ${JSON.stringify(join(root, 'src/policy/gate.ts'))};
        import { DEFAULTS } from ${JSON.stringify(join(root, 'src/config/schema.ts'))};
        import { silentLogger } from ${JSON.stringify(join(root, 'src/core/logger.ts'))};
        ${assetDir(root, assets)}
        const config = { ...DEFAULTS, mcp: [], policy: { ...DEFAULTS.policy, allowed_commands: ['ls', 'grep', 'git', 'rg', 'head'] } };
        const gate = createPolicyGate({ config, cwd: process.cwd(), env: { HOME: process.env.HOME, RUNE_HOME: process.env.RUNE_HOME },
          interactive: false, yes: false, sessionId: 'bench', logger: silentLogger });
        const cases = ${JSON.stringify(cases)};
        const long = ${JSON.stringify({ ...LONG, ...HUGE })};
        const call = (cmd) => ({ tool: 'execute_cmd', args: { cmd }, source: 'builtin', access: { kind: 'command' } });
        // Wall time, and the CPU time the process spent (what an idle machine would wait).
        const time = async (c) => { const t = process.hrtime.bigint(); const u = process.cpuUsage(); const d = await gate.check(c); const cpu = process.cpuUsage(u); return [Number(process.hrtime.bigint() - t) / 1e3, d, cpu.user + cpu.system]; };
        (async () => {
          const [firstUs] = await time(cases['execute_cmd: ls -la']);
          if (process.env.FIRST_ONLY) { console.log(JSON.stringify({ firstMs: firstUs / 1000 })); return; }
          const names = [...Object.keys(cases), ...Object.keys(long)];
          const samples = Object.fromEntries(names.map((name) => [name, []]));
          const cpu = Object.fromEntries(names.map((name) => [name, []]));
          for (let i = 0; i < Number(process.env.ROUNDS); i++) for (const [name, c] of Object.entries(cases)) {
            const [us, d, cpuUs] = await time(c);
            samples[name].push(us);
            cpu[name].push(cpuUs);
            if (d.kind !== 'allow') throw new Error(name + ': ' + JSON.stringify(d));
          }
          // Each long line judged a few times, alone: what one call holds the run loop for.
          for (let i = 0; i < 5; i++) for (const [name, cmd] of Object.entries(long)) {
            const [us, , cpuUs] = await time(call(cmd));
            samples[name].push(us);
            cpu[name].push(cpuUs);
          }
          console.log(JSON.stringify({ samples, cpu }));
        })();
      `,
      resolveDir: root,
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile: script,
    logLevel: 'error',
    alias,
    nodePaths: [join(root, 'node_modules')],
  });
  return script;
}

writeFileSync(join(work, 'a.txt'), 'x');
const env = { PATH: '/usr/bin:/bin', HOME: work, RUNE_HOME: join(work, '.rune'), ROUNDS: String(rounds) };
const run = (script, extra = {}) => {
  const result = spawnSync(process.execPath, [script], {
    cwd: work,
    env: { ...env, ...extra },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(result.stderr);
  return JSON.parse(result.stdout);
};

const scripts = { this: bundle(ROOT, 'this') };
if (values.before) scripts.before = bundle(resolve(values.before), 'before');
const measured = Object.fromEntries(Object.entries(scripts).map(([name, script]) => [name, run(script)]));
const results = Object.fromEntries(Object.entries(measured).map(([name, m]) => [name, m.samples]));
const cpuOf = (name, which = 'this') => median(measured[which].cpu[name]);
const firsts = Object.fromEntries(
  Object.entries(scripts).map(([name, script]) => [
    name,
    median(Array.from({ length: 7 }, () => run(script, { FIRST_ONLY: '1' }).firstMs)),
  ]),
);

const base = median(results.this['read_file (baseline)']);
console.log(`\none decision, in microseconds (${rounds} interleaved rounds; cpu: the process's CPU time)`);
for (const [name, list] of Object.entries(results.this)) {
  if (name in LONG || name in HUGE) continue;
  const m = median(list);
  const ratio = name.includes('baseline') ? '(baseline)' : `ratio ${(m / base).toFixed(2)}`;
  const before = results.before?.[name]
    ? `  before ${median(results.before[name]).toFixed(0).padStart(6)} µs, this/before ${(m / median(results.before[name])).toFixed(2)}`
    : '';
  console.log(
    `  ${name.padEnd(34)} median ${m.toFixed(0).padStart(6)} µs  p90 ${percentile(list, 90).toFixed(0).padStart(6)} µs  cpu ${cpuOf(name).toFixed(0).padStart(6)} µs  ${ratio}${before}`,
  );
}
console.log(
  '\none long line, alone: the time the run loop waits on it (budget 50 ms), median of 5, wall and CPU',
);
for (const name of [...Object.keys(LONG), ...Object.keys(HUGE)]) {
  const m = median(results.this[name]) / 1000;
  const before = results.before
    ? `  before ${(median(results.before[name]) / 1000).toFixed(1).padStart(7)} ms, this/before ${((m * 1000) / median(results.before[name])).toFixed(3)}`
    : '';
  const cpu = cpuOf(name) / 1000;
  console.log(
    `  ${name.padEnd(36)} ${m.toFixed(1).padStart(7)} ms  cpu ${cpu.toFixed(1).padStart(6)} ms  wall/budget ${(m / 50).toFixed(2)}  cpu/budget ${(cpu / 50).toFixed(2)}${before}`,
  );
}
console.log(
  `\nfirst execute_cmd decision of a process (loads the parser): median ${firsts.this.toFixed(1)} ms`,
);
console.log(
  `  ratio to a warm execute_cmd decision: ${((firsts.this * 1000) / median(results.this['execute_cmd: ls -la'])).toFixed(0)}`,
);
if (firsts.before !== undefined)
  console.log(
    `  before: ${firsts.before.toFixed(1)} ms, this/before ${(firsts.this / firsts.before).toFixed(2)}`,
  );
