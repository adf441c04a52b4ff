// Pipe mode end to end: `echo "what is 2+2" | rune --base-url <local mock> …` answering in one step,
// against `node -e 0` (goal: ratio ≤ 1.5). The mock runs in a worker thread because the timed
// runs block the main thread (spawnSync).
//   node bench/pipe.mjs [--rounds 20]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { interleave, median, report, requireBinary, timeOnce } from './lib.mjs';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '20' } } });
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
    const stream = JSON.parse(body || '{}').stream === true;
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

const home = mkdtempSync(join(tmpdir(), 'rune-bench-pipe-'));
const env = { PATH: '/usr/bin:/bin', HOME: home, RUNE_HOME: join(home, '.rune') };
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

function pipeOnce(runEnv = env) {
  const start = process.hrtime.bigint();
  const result = spawnSync(rune, args, { input: 'what is 2+2', env: runEnv, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  // A run that failed or answered wrongly must never look fast.
  if (result.status !== 0 || !result.stdout.includes('The answer is 4.')) {
    throw new Error(
      `rune pipe run failed (exit ${result.status}): ${(result.stderr || result.stdout).slice(0, 800)}`,
    );
  }
  return ms;
}

try {
  const samples = interleave(
    {
      'node -e 0': () => timeOnce(process.execPath, ['-e', '0'], { env }),
      'echo "what is 2+2" | rune … (one step)': () => pipeOnce(),
      'the same, first run was --help': () => pipeOnce(helpEnv),
    },
    rounds,
  );
  report(
    `pipe mode, one-step answer from a local mock vs node -e 0, ${rounds} interleaved rounds`,
    samples,
    'node -e 0',
  );
  const ratio = median(samples['echo "what is 2+2" | rune … (one step)']) / median(samples['node -e 0']);
  console.log(`  goal ≤ 1.5: ${ratio <= 1.5 ? 'met' : 'NOT met'} (${ratio.toFixed(2)})`);
} finally {
  await worker.terminate();
  rmSync(home, { recursive: true, force: true });
  rmSync(helpHome, { recursive: true, force: true });
}
