// Public reads against their floor: for each path, the answer rune gives (bytes and headers) is
// served again by a bare fastify that does nothing else, and both are loaded alike; the ratio of
// server CPU per request (bare ÷ rune, 1.0 = no cost of its own) is independent of how fast the
// client is. Interleaved in rounds (rune between its two twins), so drift in the machine's load
// hits them alike.
//
// Two bare twins: one finds each answer by a route of the same shape as rune's (`/raw/:note/:file`:
// what any server of more than one file does, so the ratio against it is rune's own cost), the
// other by a static route of the one path (the floor of fastify itself, printed beside it).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { median, ROOT } from '../lib.mjs';
import { load, waitForLine } from './lib.mjs';

const require = createRequire(join(ROOT, 'package.json'));
/** Headers that belong to one connection or moment, not to the answer. */
const TRANSIENT = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);

/**
 * A bare fastify answering each path with exactly `answers[path]` (status 200, headers, body): by
 * `answers[path].route` with its parameters looked up in a map (`routed`), else by the path itself.
 */
async function startTwin(answers, routed) {
  const code = `
    const answers = ${JSON.stringify(answers)};
    const routed = ${routed};
    const fastify = require(${JSON.stringify(require.resolve('fastify'))})({ logger: false });
    const byRoute = new Map();
    for (const [path, a] of Object.entries(answers)) {
      const body = Buffer.from(a.body, 'base64');
      if (!routed) {
        fastify.get(path, (req, reply) => { reply.headers(a.headers).send(body); });
        continue;
      }
      const found = new Map([[a.key, { headers: a.headers, body }]]);
      byRoute.set(a.route, found);
    }
    for (const [route, found] of byRoute) {
      fastify.get(route, (req, reply) => {
        const a = found.get(req.params.note + '/' + req.params.file);
        if (!a) return reply.code(404).send();
        reply.headers(a.headers).send(a.body);
      });
    }
    fastify.listen({ host: '127.0.0.1', port: 0 }).then(() => process.stderr.write('port ' + fastify.server.address().port + '\\n'));`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'ignore', 'pipe'] });
  const [, port] = await waitForLine(child, /port (\d+)/);
  return { child, url: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') };
}

/**
 * `paths` ({path: route}, e.g. '/raw/n/f.md': '/raw/:note/:file') read from `server`
 * (`{url, child}`) and from its bare twins: per path, medians over `rounds` of the rate and CPU per
 * request of each, and the CPU ratios (against the routed twin, and the static one).
 */
export async function readsAgainstBare({ request, server, paths, seconds, connections, rounds = 7 }) {
  const answers = {};
  for (const [path, route] of Object.entries(paths)) {
    const res = await request(`${server.url}${path}`);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.body}`);
    const headers = Object.fromEntries(Object.entries(res.headers).filter(([name]) => !TRANSIENT.has(name)));
    const parts = path.split('/');
    const param = (name) => parts[route.split('/').indexOf(`:${name}`)];
    const [note, file] = [param('note'), param('file')];
    answers[path] = {
      headers,
      body: Buffer.from(res.body).toString('base64'),
      route,
      key: `${note}/${file}`,
    };
  }
  const twins = { routed: await startTwin(answers, true), static: await startTwin(answers, false) };
  const names = ['routed', 'rune', 'static'];
  const samples = Object.fromEntries(
    Object.keys(paths).map((p) => [p, Object.fromEntries(names.map((n) => [n, { cpu: [], rate: [] }]))]),
  );
  const measure = async (name, url, pid, path) => {
    const r = await load({ request, url: `${url}${path}`, pid, seconds, connections });
    samples[path][name].cpu.push(r.cpu);
    samples[path][name].rate.push(r.rate);
  };
  try {
    for (let round = 0; round < rounds; round++) {
      for (const path of Object.keys(paths)) {
        for (const name of names) {
          const target = name === 'rune' ? server : twins[name];
          await measure(name, target.url, target.child.pid, path);
        }
      }
    }
  } finally {
    for (const twin of Object.values(twins)) twin.stop();
  }
  return Object.fromEntries(
    Object.keys(paths).map((path) => {
      const m = Object.fromEntries(
        names.map((n) => [n, { cpu: median(samples[path][n].cpu), rate: median(samples[path][n].rate) }]),
      );
      // Ratios of each round's neighbours (measured seconds apart), then their median: a burst of
      // the machine's load that falls on one round moves one ratio, not the result.
      const ratio = (twin) =>
        median(samples[path][twin].cpu.map((cpu, round) => cpu / samples[path].rune.cpu[round]));
      return [
        path,
        {
          runeCpu: m.rune.cpu,
          bareCpu: m.routed.cpu,
          staticCpu: m.static.cpu,
          ratio: ratio('routed'),
          staticRatio: ratio('static'),
          runeRate: m.rune.rate,
          bareRate: m.routed.rate,
        },
      ];
    }),
  );
}
