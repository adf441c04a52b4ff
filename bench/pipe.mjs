// Pipe mode end to end: `echo "what is 2+2" | rune --base-url <local mock> …` answering in one step,
// against `node -e 0` (goal: ratio ≤ 1.5) and against the least any Node program pays for the same
// answer (read stdin, one streamed POST through node:http, print the text: no flags, config,
// policy or SDK), and a run of ten sandboxed execute_cmd calls (`true`),
// whose difference to the one-step run over ten is the overhead per tool call. `--before BIN` adds
// another build (main before a change, say) side by side in the same interleaved rounds. The mock
// runs in a worker thread because the timed runs block the main thread (spawnSync).
// `--instructions N` adds the instructions of N runs of each (valgrind), which a busy machine does
// not disturb: the measure to compare two builds on a shared machine (docs/adr/0029).
//   node bench/pipe.mjs [--rounds 20] [--before path/to/old/rune] [--instructions 3]
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import {
  hasValgrind,
  instructionsOnce,
  interleave,
  median,
  report,
  requireBinary,
  timeOnce,
} from './lib.mjs';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '20' },
    before: { type: 'string' },
    instructions: { type: 'string' },
  },
});
const rounds = Math.max(20, Number(values.rounds));
const rune = requireBinary();

// A one-step OpenAI-compatible answer, streamed the way real servers do.
const MOCK = `
const { createServer } = require('node:http');
const { parentPort } = require('node:worker_threads');
const chunk = (delta, finish = null, usage) =>
  'data: ' + JSON.stringify({ id: 'b', object: 'chat.completion.chunk', created: 0, model: 'm',
    choices: usage ? [] : [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) }) + '\\n\\n';
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => {
    const request = JSON.parse(body || '{}');
    const stream = request.stream === true;
    const messages = request.messages ?? [];
    const tenTools = messages.some((m) => m.role === 'user' && String(m.content).includes('ten tools'));
    const toolResults = messages.filter((m) => m.role === 'tool').length;
    if (stream && tenTools && toolResults < 10) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_' + toolResults,
        type: 'function', function: { name: 'execute_cmd', arguments: '{"cmd":"true"}' } }] }));
      res.write(chunk({}, 'tool_calls'));
      res.write(chunk(null, null, { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }));
      res.end('data: [DONE]\\n\\n');
      return;
    }
    if (!stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'b', object: 'chat.completion', created: 0, model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: 'The answer is 4.' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk({ role: 'assistant', content: '' }));
    res.write(chunk({ content: 'The answer ' }));
    res.write(chunk({ content: 'is 4.' }));
    res.write(chunk({}, 'stop'));
    res.write(chunk(null, null, { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }));
    res.end('data: [DONE]\\n\\n');
  });
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
`;
const worker = new Worker(MOCK, { eval: true });
const port = await new Promise((resolve, reject) => {
  worker.once('message', resolve);
  worker.once('error', reject);
});

// The ten-call run: `true` allowed without asking, so each call is a real sandboxed process.
function benchHome(prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  mkdirSync(join(dir, '.rune'), { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, '.rune', 'rune.toml'), '[policy]\nallowed_commands = ["true"]\n');
  return { dir, env: { PATH: '/usr/bin:/bin', HOME: dir, RUNE_HOME: join(dir, '.rune') } };
}
const { dir: home, env } = benchHome('rune-bench-pipe-');
// The other build gets a home of its own: the kernel-probe cache is keyed by the binary, so two
// builds sharing one would each find the other's entry and probe again on every tool run.
const before = values.before ? requireBinary(values.before) : undefined;
const { dir: beforeHome, env: beforeEnv } = benchHome('rune-bench-pipe-before-');
const args = [
  '--base-url',
  `http://127.0.0.1:${port}/v1`,
  '--api-key',
  'sk-bench-0000000000000000',
  '--model',
  'm',
];

// A second home whose first run was `--help`: its code cache must still come to cover pipe runs.
const helpHome = mkdtempSync(join(tmpdir(), 'rune-bench-pipe-help-'));
const helpEnv = { PATH: '/usr/bin:/bin', HOME: helpHome, RUNE_HOME: join(helpHome, '.rune') };
spawnSync(rune, ['--help'], { env: helpEnv, stdio: 'ignore' });

function pipeOnce(runEnv = env, bin = rune, prompt = 'what is 2+2', calls = 0) {
  const start = process.hrtime.bigint();
  const result = spawnSync(bin, args, { input: prompt, env: runEnv, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  // A run that failed, answered wrongly or skipped its tool calls must never look fast.
  const ran = (result.stderr.match(/execute_cmd/g) ?? []).length;
  if (result.status !== 0 || !result.stdout.includes('The answer is 4.') || ran < calls) {
    throw new Error(
      `rune pipe run failed (exit ${result.status}, ${ran}/${calls} calls): ${(result.stderr || result.stdout).slice(0, 800)}`,
    );
  }
  return ms;
}

// The floor: the same request and answer in a bare Node script.
const FLOOR = `
const body = JSON.stringify({ model: 'm', stream: true,
  messages: [{ role: 'user', content: require('node:fs').readFileSync(0, 'utf8') }] });
const request = require('node:http').request(process.argv[1], { method: 'POST',
  headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' } }, (response) => {
  let text = '';
  response.setEncoding('utf8').on('data', (d) => (text += d)).on('end', () => {
    let answer = '';
    for (const line of text.split('\\n'))
      if (line.startsWith('data: {')) answer += JSON.parse(line.slice(6)).choices[0]?.delta?.content ?? '';
    process.stdout.write(answer + '\\n');
  });
});
request.end(body);
`;
function floorOnce() {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, ['-e', FLOOR, `http://127.0.0.1:${port}/v1/chat/completions`], {
    input: 'what is 2+2',
    env,
    encoding: 'utf8',
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0 || !result.stdout.includes('The answer is 4.'))
    throw new Error(`the floor script failed: ${(result.stderr || result.stdout).slice(0, 400)}`);
  return ms;
}

/** The one-step answer, node -e 0 and the floor in instructions: medians of `runs` each. */
function instructionTable(runs) {
  if (!hasValgrind()) {
    console.log('\n  instructions: skipped (valgrind is not installed: apt-get install valgrind)');
    return;
  }
  const answered = (stdout) => stdout.includes('The answer is 4.');
  const input = 'what is 2+2';
  const cases = {
    'node -e 0': () => instructionsOnce(process.execPath, ['-e', '0'], { env }),
    [FLOOR_CASE]: () =>
      instructionsOnce(
        process.execPath,
        ['-e', FLOOR, `http://127.0.0.1:${port}/v1/chat/completions`],
        { env, input },
        answered,
      ),
    [ONE]: () => instructionsOnce(rune, args, { env, input }, answered),
    ...(before
      ? { 'before: one step': () => instructionsOnce(before, args, { env: beforeEnv, input }, answered) }
      : {}),
  };
  const counts = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
  for (let i = 0; i < runs; i++) for (const [name, once] of Object.entries(cases)) counts[name].push(once());
  const base = median(counts['node -e 0']);
  console.log(`\ninstructions (valgrind, median of ${runs} each)`);
  for (const [name, values] of Object.entries(counts)) {
    const m = median(values);
    console.log(`  ${name.padEnd(44)} ${(m / 1e6).toFixed(1).padStart(7)} M  ratio ${(m / base).toFixed(3)}`);
  }
}

const ONE = 'echo "what is 2+2" | rune … (one step)';
const FLOOR_CASE = 'node: the same answer over bare node:http';
const TEN = 'the same after ten execute_cmd calls';

try {
  const cases = {
    'node -e 0': () => timeOnce(process.execPath, ['-e', '0'], { env }),
    [FLOOR_CASE]: () => floorOnce(),
    [ONE]: () => pipeOnce(),
    'the same, first run was --help': () => pipeOnce(helpEnv),
    [TEN]: () => pipeOnce(env, rune, 'use ten tools, then answer', 10),
  };
  if (before) {
    cases['before: one step'] = () => pipeOnce(beforeEnv, before);
    cases['before: ten execute_cmd calls'] = () =>
      pipeOnce(beforeEnv, before, 'use ten tools, then answer', 10);
  }
  const samples = interleave(cases, rounds);
  report(
    `pipe mode, one-step answer from a local mock vs node -e 0, ${rounds} interleaved rounds (load ${loadavg()[0].toFixed(1)})`,
    samples,
    'node -e 0',
  );
  const ratio = median(samples[ONE]) / median(samples['node -e 0']);
  console.log(`  goal ≤ 1.5: ${ratio <= 1.5 ? 'met' : 'NOT met'} (${ratio.toFixed(2)})`);
  const floor = median(samples[FLOOR_CASE]);
  console.log(
    `  the floor (bare node:http) is ${(floor / median(samples['node -e 0'])).toFixed(2)} × node -e 0; rune's one step is ${(median(samples[ONE]) / floor).toFixed(2)} × the floor, ${(median(samples[ONE]) - floor).toFixed(1)} ms above it`,
  );
  const perCall = (median(samples[TEN]) - median(samples[ONE])) / 10;
  console.log(
    `  overhead per tool call (sandboxed execute_cmd true + a model round trip): ${perCall.toFixed(1)} ms`,
  );
  if (before) {
    const was = median(samples['before: one step']) / median(samples['node -e 0']);
    const wasPerCall =
      (median(samples['before: ten execute_cmd calls']) - median(samples['before: one step'])) / 10;
    console.log(`  before: one step ${was.toFixed(2)} × node, ${wasPerCall.toFixed(1)} ms per tool call`);
  }
  if (values.instructions) instructionTable(Math.max(1, Number(values.instructions)));
} finally {
  await worker.terminate();
  rmSync(home, { recursive: true, force: true });
  rmSync(beforeHome, { recursive: true, force: true });
  rmSync(helpHome, { recursive: true, force: true });
}
