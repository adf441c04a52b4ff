// The interactive session against Codex's TUI, both driven in a pseudo-terminal (session-pty.py)
// against the same local mock model (chat completions for rune, the Responses API for Codex):
//   echo:   keystroke-to-echo latency while a 2,000-line answer streams (and at an idle prompt);
//   render: Enter to the last line of a 2,000-line Markdown answer delivered at once.
// Codex is found with --codex PATH, $CODEX_BIN or a `codex` on PATH (`npm install @openai/codex`
// into a temporary folder); without it only rune's numbers are printed.
//   node bench/session.mjs [--rounds 3] [--codex path/to/codex] [--serve: only the mock, to look by hand]
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { median, percentile, ROOT, requireBinary } from './lib.mjs';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    codex: { type: 'string' },
    serve: { type: 'boolean' },
  },
});
const rounds = Math.max(1, Number(values.rounds));
const rune = requireBinary();

/**
 * The answer: 2,000 lines of headings, paragraphs, lists and code, lower case only. The markers the
 * driver waits for hold no space: a TUI that redraws by cells (Codex) moves the cursor between words.
 */
function answer() {
  const lines = [];
  for (let section = 1; lines.length < 1990; section++) {
    lines.push(
      `## section-${section}`,
      '',
      `a paragraph about part ${section} with **bold** and \`code\` words.`,
      '',
    );
    for (let i = 1; i <= 6; i++) lines.push(`- item ${section}.${i} of the list`);
    lines.push('', '```js', `const part${section} = ${section};`, `console.log(part${section});`, '```', '');
  }
  lines.push('final-line-of-the-answer-done');
  return lines.join('\n');
}

// Both wires, streaming: /slow/ spreads the answer over ~6 s, /fast/ sends it at once.
const MOCK = `
const { createServer } = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');
const answer = workerData.answer;
const pieces = answer.match(/[\\s\\S]{1,200}/g);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const server = createServer((req, res) => {
  req.resume();
  req.on('end', async () => {
    if (req.url.endsWith('/models')) { res.writeHead(200); res.end('{"object":"list","data":[]}'); return; }
    const slow = req.url.startsWith('/slow/');
    const wait = slow ? 6000 / pieces.length : 0;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const responses = req.url.endsWith('/responses');
    const ev = (type, data) => res.write('event: ' + type + '\\ndata: ' + JSON.stringify({ type, ...data }) + '\\n\\n');
    const chunk = (delta, finish = null, usage) => res.write('data: ' + JSON.stringify({ id: 'b', object: 'chat.completion.chunk', created: 0, model: 'm', choices: usage ? [] : [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) }) + '\\n\\n');
    if (responses) {
      ev('response.created', { response: { id: 'r', object: 'response', status: 'in_progress', output: [] } });
      ev('response.output_item.added', { output_index: 0, item: { type: 'message', id: 'm1', role: 'assistant', status: 'in_progress', content: [] } });
      ev('response.content_part.added', { item_id: 'm1', output_index: 0, content_index: 0, part: { type: 'output_text', text: '' } });
    } else chunk({ role: 'assistant', content: '' });
    for (const piece of pieces) {
      if (responses) ev('response.output_text.delta', { item_id: 'm1', output_index: 0, content_index: 0, delta: piece });
      else chunk({ content: piece });
      if (wait) await sleep(wait);
    }
    if (responses) {
      ev('response.output_text.done', { item_id: 'm1', output_index: 0, content_index: 0, text: answer });
      ev('response.output_item.done', { output_index: 0, item: { type: 'message', id: 'm1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: answer, annotations: [] }] } });
      ev('response.completed', { response: { id: 'r', object: 'response', status: 'completed', output: [], usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } } } });
      res.end();
    } else {
      chunk({}, 'stop');
      chunk(null, null, { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
      res.end('data: [DONE]\\n\\n');
    }
  });
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
`;

/** Stops the processes a run left behind: those whose command line names its HOME. */
function stopLeftovers(home) {
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(home)) process.kill(Number(pid), 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
}

function findCodex() {
  if (values.codex) return values.codex;
  if (process.env.CODEX_BIN) return process.env.CODEX_BIN;
  const which = spawnSync('sh', ['-c', 'command -v codex'], { encoding: 'utf8' });
  return which.status === 0 ? which.stdout.trim() : undefined;
}

/** The program's command, environment and readiness marker, in a fresh HOME and project folder. */
function setup(name, port, speed) {
  const home = mkdtempSync(join(tmpdir(), `rune-bench-session-${name}-`));
  const cwd = join(home, 'project');
  mkdirSync(cwd);
  const env = { HOME: home, PATH: '/usr/local/bin:/usr/bin:/bin', TERM: 'xterm-256color', LANG: 'C.UTF-8' };
  const base = `http://127.0.0.1:${port}/${speed}/v1`;
  if (name === 'rune') {
    mkdirSync(join(home, '.rune'), { mode: 0o700 });
    writeFileSync(join(home, '.rune', 'folders.json'), JSON.stringify({ [cwd]: { trust: 'no' } }));
    return {
      home,
      cwd,
      argv: [rune, '--base-url', base, '--model', 'm'],
      env: { ...env, RUNE_API_KEY: 'sk-bench-session-000000' },
      ready: '/help for commands',
    };
  }
  mkdirSync(join(home, '.codex'));
  writeFileSync(
    join(home, '.codex', 'config.toml'),
    `model = "m"\nmodel_provider = "mock"\n[model_providers.mock]\nname = "mock"\nbase_url = "${base}"\nwire_api = "responses"\nenv_key = "MOCK_KEY"\n[projects."${cwd}"]\ntrust_level = "trusted"\n`,
  );
  // No background app-server daemon: it would outlive the run (each run stops what it started).
  return {
    home,
    cwd,
    argv: [codex, '--no-alt-screen', '--disable', 'daemon_auto_start'],
    env: { ...env, MOCK_KEY: 'x' },
    ready: 'for shortcuts',
  };
}

function drive(name, port, mode) {
  const speed = mode === 'render' ? 'fast' : 'slow';
  const s = setup(name, port, speed);
  const plan = {
    ...s,
    mode,
    prompt: 'write the long answer',
    first: 'section-2',
    last: 'final-line-of-the-answer-done',
    keys: 20,
    gap: 100,
  };
  const result = spawnSync('python3', [join(ROOT, 'bench/session-pty.py'), JSON.stringify(plan)], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  stopLeftovers(s.home);
  rmSync(s.home, { recursive: true, force: true });
  try {
    return JSON.parse(result.stdout.trim().split('\n').at(-1));
  } catch {
    console.log(`  ${name} ${mode}: no result (${(result.stderr || result.stdout).trim().slice(-300)})`);
    return undefined;
  }
}

const codex = findCodex();
const worker = new Worker(MOCK, { eval: true, workerData: { answer: answer() } });
const port = await new Promise((resolve) => worker.once('message', resolve));
if (values.serve) {
  // For looking at either program by hand: the mock alone, until Ctrl-C.
  console.log(`mock at http://127.0.0.1:${port}/slow/v1 and http://127.0.0.1:${port}/fast/v1`);
  await new Promise(() => {});
}
const programs = codex ? ['rune', 'codex'] : ['rune'];
const samples = {};
for (let round = 0; round < rounds; round++) {
  for (const name of programs) {
    for (const mode of ['echo', 'render']) {
      const result = drive(name, port, mode);
      if (!result?.ok) {
        console.log(
          `  ${name} ${mode}: did not finish${result?.tail ? `; its screen ended with ${JSON.stringify(result.tail.slice(-200))}` : ''}`,
        );
        continue;
      }
      const key = `${name} ${mode}`;
      samples[key] ??= [];
      if (mode === 'render') samples[key].push(result.render_ms);
      else samples[key].push(...result.echo_ms);
    }
  }
}
await worker.terminate();

const line = (name, values, base) =>
  `  ${name.padEnd(52)} median ${median(values).toFixed(1).padStart(7)} ms  p90 ${percentile(values, 90)
    .toFixed(1)
    .padStart(7)} ms${base ? `  ratio ${(median(values) / median(base)).toFixed(3)} × codex` : ''}`;
console.log(
  `\ninteractive session in a pty, ${rounds} rounds, load ${loadavg()[0].toFixed(1)}${codex ? `, against ${codex}` : ' (no codex found: --codex PATH)'}`,
);
for (const [mode, title] of [
  ['echo', 'keystroke to echo while a 2,000-line answer streams'],
  ['render', 'Enter to the last line of a 2,000-line Markdown answer'],
]) {
  console.log(` ${title}`);
  const mine = samples[`rune ${mode}`];
  const theirs = samples[`codex ${mode}`];
  if (theirs) console.log(line('codex', theirs));
  if (mine) console.log(line('rune', mine, theirs));
  else console.log('  rune: no result');
}
