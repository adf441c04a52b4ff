// Idle memory of the interactive session: the resident set (VmRSS) of `rune` in a real terminal
// (tmux) after it has answered one prompt from a local mock model, and after three; beside it, in
// the same run, a bare Node REPL that has evaluated one expression. Goal: the session after one
// answer ≤ 80 MB. Each figure is the median of --rounds fresh sessions, split into anonymous memory
// (the heap: what a change to rune moves) and file pages (the binary's own mapped pages).
//   node bench/memory.mjs [--rounds 5] [--before path/to/old/rune]
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { median, requireBinary } from './lib.mjs';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '5' }, before: { type: 'string' } },
});
const rounds = Math.max(3, Number(values.rounds));
const rune = requireBinary();
const before = values.before ? requireBinary(values.before) : undefined;
const SOCKET = `rune-bench-memory-${process.pid}`;

try {
  execFileSync('tmux', ['-V']);
} catch {
  console.log('memory bench skipped: tmux is not installed (apt-get install -y tmux)');
  process.exit(0);
}

// The model: every prompt gets one short streamed answer, numbered so the pane shows which arrived.
let answered = 0;
const model = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const n = ++answered;
    const event = (body) => `data: ${JSON.stringify(body)}\n\n`;
    const chunk = (delta, finish_reason = null) =>
      event({
        id: 'm',
        object: 'chat.completion.chunk',
        created: 0,
        model: 'm',
        choices: [{ index: 0, delta, finish_reason }],
      });
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(
      `${chunk({ role: 'assistant', content: `answer-${n} done.` })}${chunk({}, 'stop')}data: [DONE]\n\n`,
    );
  });
});
await new Promise((resolve) => model.listen(0, '127.0.0.1', resolve));
const baseUrl = `http://127.0.0.1:${model.address().port}/v1`;

const tmux = (...args) => execFileSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8' });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(name, pattern, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pane = tmux('capture-pane', '-p', '-t', name);
    if (pattern.test(pane)) return;
    if (Date.now() > deadline)
      throw new Error(`${name}: ${pattern} did not appear; the pane shows:\n${pane}`);
    await sleep(50);
  }
}

/** VmRSS in MB, and its anonymous and file-backed parts, of the process in the pane running `exe` (the pane's shell may have exec'd it or not). */
function rssOf(name, exe) {
  const panePid = Number(tmux('display-message', '-p', '-t', name, '#{pane_pid}').trim());
  const queue = [panePid];
  while (queue.length > 0) {
    const pid = queue.shift();
    let path = '';
    try {
      path = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0')[0];
    } catch {
      continue;
    }
    if (path === exe) {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const mb = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1]) / 1024;
      return { rss: mb('VmRSS'), anon: mb('RssAnon'), file: mb('RssFile') };
    }
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (children) queue.push(...children.split(/\s+/).map(Number));
    }
  }
  throw new Error(`${name}: no ${exe} process in the pane`);
}

let sessions = 0;
function open(argv, env) {
  const name = `m${++sessions}`;
  tmux('new-session', '-d', '-s', name, '-x', '120', '-y', '40', 'env', '-i', ...env, ...argv);
  return name;
}

/** One fresh interactive session: RSS after its first answer and after its third. */
async function session(bin) {
  const home = mkdtempSync(join(tmpdir(), 'rune-bench-memory-'));
  mkdirSync(join(home, '.rune'), { recursive: true, mode: 0o700 });
  writeFileSync(join(home, '.rune', 'rune.toml'), '');
  const env = [
    `HOME=${home}`,
    `RUNE_HOME=${join(home, '.rune')}`,
    'PATH=/usr/bin:/bin',
    'TERM=xterm-256color',
  ];
  const name = open(
    [bin, '--base-url', baseUrl, '--api-key', 'sk-bench-0000000000000000', '--model', 'm'],
    env,
  );
  try {
    const readings = [];
    for (let turn = 1; turn <= 3; turn++) {
      const first = answered + 1;
      tmux('send-keys', '-t', name, '-l', `say something ${turn}`);
      tmux('send-keys', '-t', name, 'Enter');
      await waitFor(name, new RegExp(`answer-${first} done\\.`));
      await sleep(300); // the prompt is drawn again and the turn's garbage is left to settle
      if (turn === 1 || turn === 3) readings.push(rssOf(name, bin));
    }
    return readings;
  } finally {
    tmux('kill-session', '-t', name);
    rmSync(home, { recursive: true, force: true });
  }
}

/** A bare Node REPL that has evaluated one expression: Node's own idle interactive footprint. */
async function nodeRepl() {
  const name = open([process.execPath], ['PATH=/usr/bin:/bin', 'TERM=xterm-256color']);
  try {
    await waitFor(name, /^>\s*$/m);
    tmux('send-keys', '-t', name, '-l', '6*7');
    tmux('send-keys', '-t', name, 'Enter');
    await waitFor(name, /^42$/m);
    await sleep(300);
    return rssOf(name, process.execPath);
  } finally {
    tmux('kill-session', '-t', name);
  }
}

const samples = { node: [], one: [], three: [], beforeOne: [], beforeThree: [] };
try {
  for (let i = 0; i < rounds; i++) {
    samples.node.push(await nodeRepl());
    const [one, three] = await session(rune);
    samples.one.push(one);
    samples.three.push(three);
    if (before) {
      const [b1, b3] = await session(before);
      samples.beforeOne.push(b1);
      samples.beforeThree.push(b3);
    }
  }
} finally {
  try {
    execFileSync('tmux', ['-L', SOCKET, 'kill-server'], { stdio: 'ignore' });
  } catch {
    // No session left.
  }
  model.close();
}

const pick = (list, key) => list.map((reading) => reading[key]);
const base = median(pick(samples.node, 'rss'));
const line = (label, list) => {
  const rss = median(pick(list, 'rss'));
  console.log(
    `  ${label.padEnd(40)} RSS ${rss.toFixed(1).padStart(6)} MB (anon ${median(pick(list, 'anon')).toFixed(1).padStart(5)}, file ${median(pick(list, 'file')).toFixed(1).padStart(5)})  ratio ${(rss / base).toFixed(2)}`,
  );
};
console.log(
  `\nidle RSS of the interactive session, ${rounds} fresh sessions each (load ${loadavg()[0].toFixed(1)})`,
);
line('node REPL after one expression (baseline)', samples.node);
line('rune session after one answer', samples.one);
line('rune session after three answers', samples.three);
if (before) {
  line('before: after one answer', samples.beforeOne);
  line('before: after three answers', samples.beforeThree);
}
// The file part is the binary's own pages (a ~100 MB SEA) that the kernel keeps mapped; it varies
// with the page cache (a binary just copied maps fewer), so compare builds by their anon part too.
const one = median(pick(samples.one, 'rss'));
console.log(`  goal after one answer ≤ 80 MB: ${one <= 80 ? 'met' : 'NOT met'} (${one.toFixed(1)} MB)`);
