// Cost of one policy decision inside a running rune: a read_file check (canonicalisation + audit
// line) is the baseline; execute_cmd adds the tree-sitter-bash parse and the command rules. The
// parser's one-time load is timed in fresh processes. Medians of interleaved runs, as ratios.
//   node bench/policy.mjs [--rounds 2000]
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildSync } from 'esbuild';
import { median, percentile, ROOT } from './lib.mjs';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '2000' } } });
const rounds = Math.max(200, Number(values.rounds));
const work = mkdtempSync(join(tmpdir(), 'rune-bench-policy-'));
const require = createRequire(import.meta.url);

// The same wasm files the build embeds, where readAsset() looks outside a SEA.
mkdirSync(join(work, 'assets/wasm'), { recursive: true });
copyFileSync(require.resolve('web-tree-sitter/tree-sitter.wasm'), join(work, 'assets/wasm/tree-sitter.wasm'));
copyFileSync(
  join(dirname(require.resolve('tree-sitter-bash/package.json')), 'tree-sitter-bash.wasm'),
  join(work, 'assets/wasm/tree-sitter-bash.wasm'),
);
const script = join(work, 'bench.cjs');
buildSync({
  stdin: {
    contents: `
      import { createPolicyGate } from ${JSON.stringify(join(ROOT, 'src/policy/gate.ts'))};
      import { DEFAULTS } from ${JSON.stringify(join(ROOT, 'src/config/schema.ts'))};
      import { silentLogger } from ${JSON.stringify(join(ROOT, 'src/core/logger.ts'))};
      import { devAssets } from ${JSON.stringify(join(ROOT, 'src/core/assets.ts'))};
      devAssets.dir = process.env.ASSETS;
      const config = { ...DEFAULTS, mcp: [], policy: { ...DEFAULTS.policy, allowed_commands: ['ls', 'grep', 'git', 'rg', 'head'] } };
      const gate = createPolicyGate({ config, cwd: process.cwd(), env: { HOME: process.env.HOME, RUNE_HOME: process.env.RUNE_HOME },
        interactive: false, yes: false, sessionId: 'bench', logger: silentLogger });
      const cases = {
        'read_file (baseline)': { tool: 'read_file', args: { path: 'a.txt' }, source: 'builtin', access: { kind: 'read', target: 'file' } },
        'execute_cmd: ls -la': { tool: 'execute_cmd', args: { cmd: 'ls -la' }, source: 'builtin', access: { kind: 'command' } },
        'execute_cmd: ls -la | grep x': { tool: 'execute_cmd', args: { cmd: 'ls -la | grep x' }, source: 'builtin', access: { kind: 'command' } },
        'execute_cmd: 5-command list': { tool: 'execute_cmd', args: { cmd: "git log --oneline -n 20 && rg -n 'foo|bar' src | head -5; ls -la src; grep -c x a.txt" }, source: 'builtin', access: { kind: 'command' } },
      };
      (async () => {
      const start = process.hrtime.bigint();
      await gate.check(cases['execute_cmd: ls -la']);
      const firstMs = Number(process.hrtime.bigint() - start) / 1e6;
      if (process.env.FIRST_ONLY) { console.log(JSON.stringify({ firstMs })); process.exit(0); }
      const rounds = Number(process.env.ROUNDS);
      const samples = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
      for (let i = 0; i < rounds; i++) for (const [name, call] of Object.entries(cases)) {
        const t = process.hrtime.bigint();
        const d = await gate.check(call);
        samples[name].push(Number(process.hrtime.bigint() - t) / 1e3);
        if (d.kind !== 'allow') throw new Error(name + ': ' + JSON.stringify(d));
      }
      console.log(JSON.stringify({ samples }));
      })();
    `,
    resolveDir: ROOT,
    loader: 'ts',
  },
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  outfile: script,
  logLevel: 'error',
  alias: { 'web-tree-sitter': require.resolve('web-tree-sitter') },
});
writeFileSync(join(work, 'a.txt'), 'x');
const env = {
  PATH: '/usr/bin:/bin',
  HOME: work,
  RUNE_HOME: join(work, '.rune'),
  ASSETS: join(work, 'assets'),
  ROUNDS: String(rounds),
};
const run = (extra = {}) => {
  const result = spawnSync(process.execPath, [script], {
    cwd: work,
    env: { ...env, ...extra },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(result.stderr);
  return JSON.parse(result.stdout);
};

const { samples } = run();
const base = median(samples['read_file (baseline)']);
console.log(`\none decision, in microseconds (${rounds} interleaved rounds)`);
for (const [name, list] of Object.entries(samples)) {
  const m = median(list);
  const ratio = name.includes('baseline') ? '(baseline)' : `ratio ${(m / base).toFixed(2)}`;
  console.log(
    `  ${name.padEnd(34)} median ${m.toFixed(0).padStart(6)} µs  p90 ${percentile(list, 90).toFixed(0).padStart(6)} µs  ${ratio}`,
  );
}
const firsts = Array.from({ length: 7 }, () => run({ FIRST_ONLY: '1' }).firstMs);
console.log(
  `\nfirst execute_cmd decision of a process (loads the parser): median ${median(firsts).toFixed(1)} ms`,
);
console.log(
  `  ratio to a warm execute_cmd decision: ${((median(firsts) * 1000) / median(samples['execute_cmd: ls -la'])).toFixed(0)}`,
);
