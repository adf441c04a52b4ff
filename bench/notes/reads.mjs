// Public reads against their floor: for each path, the answer rune gives (bytes and headers) is
// served again by a bare fastify that does nothing else, and both are loaded alike; the ratio of
// server CPU per request (bare ÷ rune, 1.0 = no cost of its own) is independent of how fast the
// client is. Interleaved in rounds, so drift in the machine's load hits both alike.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { median, ROOT } from '../lib.mjs';
import { load, waitForLine } from './lib.mjs';

const require = createRequire(join(ROOT, 'package.json'));
/** Headers that belong to one connection or moment, not to the answer. */
const TRANSIENT = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);

/** A bare fastify answering each path with exactly `answers[path]` (status 200, headers, body). */
async function startTwin(answers) {
  const code = `
    const answers = ${JSON.stringify(answers)};
    const fastify = require(${JSON.stringify(require.resolve('fastify'))})({ logger: false });
    for (const [path, a] of Object.entries(answers)) {
      const body = Buffer.from(a.body, 'base64');
      fastify.get(path, (req, reply) => { reply.headers(a.headers).send(body); });
    }
    fastify.listen({ host: '127.0.0.1', port: 0 }).then(() => process.stderr.write('port ' + fastify.server.address().port + '\\n'));`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'ignore', 'pipe'] });
  const [, port] = await waitForLine(child, /port (\d+)/);
  return { child, url: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') };
}

/**
 * `paths` read from `server` (`{url, child}`) and from its bare twin: per path, medians over
 * `rounds` of the rate and CPU per request of each, and the CPU ratio.
 */
export async function readsAgainstBare({ request, server, paths, seconds, connections, rounds = 3 }) {
  const answers = {};
  for (const path of paths) {
    const res = await request(`${server.url}${path}`);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.body}`);
    const headers = Object.fromEntries(Object.entries(res.headers).filter(([name]) => !TRANSIENT.has(name)));
    answers[path] = { headers, body: Buffer.from(res.body).toString('base64') };
  }
  const twin = await startTwin(answers);
  const samples = Object.fromEntries(
    paths.map((p) => [p, { rune: [], bare: [], runeRate: [], bareRate: [] }]),
  );
  try {
    for (let round = 0; round < rounds; round++) {
      for (const path of paths) {
        const bare = await load({
          request,
          url: `${twin.url}${path}`,
          pid: twin.child.pid,
          seconds,
          connections,
        });
        const rune = await load({
          request,
          url: `${server.url}${path}`,
          pid: server.child.pid,
          seconds,
          connections,
        });
        samples[path].bare.push(bare.cpu);
        samples[path].rune.push(rune.cpu);
        samples[path].bareRate.push(bare.rate);
        samples[path].runeRate.push(rune.rate);
      }
    }
  } finally {
    twin.stop();
  }
  return Object.fromEntries(
    paths.map((path) => {
      const s = samples[path];
      const rune = median(s.rune);
      const bare = median(s.bare);
      return [
        path,
        {
          runeCpu: rune,
          bareCpu: bare,
          ratio: bare / rune,
          runeRate: median(s.runeRate),
          bareRate: median(s.bareRate),
        },
      ];
    }),
  );
}
