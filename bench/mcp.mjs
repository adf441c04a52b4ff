// What an MCP server adds to a pipe run (start, handshake, tool listing, shutdown): a one-step
// answer from a local mock with no server (the baseline), with server-everything over stdio (its
// process started in the sandbox), and with the same server already running over Streamable HTTP
// and SSE. A bare SDK client (node, no rune) connecting over Streamable HTTP and listing the tools
// is measured beside them, as the floor a remote connection costs.
//   node bench/mcp.mjs [--rounds 10]
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { interleave, median, ROOT, report, requireBinary, timeOnce } from './lib.mjs';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '10' } } });
const rounds = Math.max(5, Number(values.rounds));
const rune = requireBinary();
const require = createRequire(join(ROOT, 'package.json'));
const EVERYTHING = join(
  dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist/index.js',
);
const SDK_CLIENT = require.resolve('@modelcontextprotocol/sdk/client/index.js');
const SDK_HTTP = require.resolve('@modelcontextprotocol/sdk/client/streamableHttp.js');

// A one-step answer (no tool call): what is timed is the MCP set-up and shutdown around it.
const MOCK = `
const { createServer } = require('node:http');
const { parentPort } = require('node:worker_threads');
const chunk = (delta, finish = null) =>
  'data: ' + JSON.stringify({ id: 'b', object: 'chat.completion.chunk', created: 0, model: 'm',
    choices: [{ index: 0, delta, finish_reason: finish }] }) + '\\n\\n';
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => {
    if (JSON.parse(body || '{}').stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk({ role: 'assistant', content: 'done' }));
      res.write(chunk({}, 'stop'));
      res.end('data: [DONE]\\n\\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'b', object: 'chat.completion', created: 0, model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'done' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } }));
  });
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
`;

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function startEverything(mode) {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, mode], {
    env: { PATH: process.env.PATH, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk) => {
      output += chunk;
      if (/listening on port|running on port/i.test(output)) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', () => reject(new Error(`server-everything ${mode} exited:\n${output}`)));
  });
  return { port, child };
}

const worker = new Worker(MOCK, { eval: true });
const mockPort = await new Promise((resolve, reject) => {
  worker.once('message', resolve);
  worker.once('error', reject);
});
const [http, sse] = await Promise.all([startEverything('streamableHttp'), startEverything('sse')]);
const home = mkdtempSync(join(tmpdir(), 'rune-bench-mcp-'));
const runeHome = join(home, '.rune');
mkdirSync(runeHome);
writeFileSync(
  join(runeHome, 'rune.toml'),
  `[policy]\nallowed_domains = ["127.0.0.1:${http.port}", "127.0.0.1:${sse.port}"]\n`,
);
const env = { PATH: process.env.PATH, HOME: home, RUNE_HOME: runeHome };
const base = [
  '--base-url',
  `http://127.0.0.1:${mockPort}/v1`,
  '--api-key',
  'sk-bench-0000000000000000',
  '--model',
  'm',
];

function pipeOnce(extra) {
  const start = process.hrtime.bigint();
  const result = spawnSync(rune, [...base, '--verbose', ...extra, 'go'], {
    env,
    encoding: 'utf8',
    input: '',
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  // A run whose server did not come up must never look fast.
  const ready = extra.length === 0 || result.stderr.includes('"event":"mcp.server_ready"');
  if (result.status !== 0 || result.stdout !== 'done\n' || !ready) {
    throw new Error(`rune failed (exit ${result.status}): ${result.stderr.slice(-800)}`);
  }
  return ms;
}

const bareClient = `
const { Client } = await import(${JSON.stringify(SDK_CLIENT)});
const { StreamableHTTPClientTransport } = await import(${JSON.stringify(SDK_HTTP)});
const client = new Client({ name: 'bench', version: '1' });
await client.connect(new StreamableHTTPClientTransport(new URL('http://127.0.0.1:${http.port}/mcp')));
const { tools } = await client.listTools();
if (tools.length === 0) process.exit(1);
await client.close();
`;

try {
  const samples = interleave(
    {
      'rune pipe run, no MCP server': () => pipeOnce([]),
      '… + stdio server-everything (sandboxed)': () => pipeOnce(['--mcp-stdio', `node ${EVERYTHING} stdio`]),
      '… + remote server over Streamable HTTP': () =>
        pipeOnce(['--mcp-http', `http://127.0.0.1:${http.port}/mcp`]),
      '… + remote server over SSE': () => pipeOnce(['--mcp-http', `http://127.0.0.1:${sse.port}/sse`]),
      'bare SDK client: connect + list (node)': () =>
        timeOnce(process.execPath, ['--input-type=module', '-e', bareClient], { env }),
    },
    rounds,
  );
  report(`MCP servers in a pipe run, ${rounds} interleaved rounds`, samples, 'rune pipe run, no MCP server');
  const plain = median(samples['rune pipe run, no MCP server']);
  for (const name of [
    '… + stdio server-everything (sandboxed)',
    '… + remote server over Streamable HTTP',
    '… + remote server over SSE',
  ]) {
    console.log(`  ${name}: +${(median(samples[name]) - plain).toFixed(0)} ms over the plain run`);
  }
} finally {
  await worker.terminate();
  http.child.kill('SIGKILL');
  sse.child.kill('SIGKILL');
  rmSync(home, { recursive: true, force: true });
}
