// An abusive notes client in a process of its own, so its load does not slow the test's own
// measurements: `node notes-attacker.mjs '<json spec>'`. It attacks until it is killed (or for
// spec.seconds) and prints one JSON line of status counts when it stops.
//   {url, kind: 'get', paths: [...], concurrency}           the same GETs in a loop (search, diff)
//   {url, kind: 'streams', path, count, holdMs}              opens `count` event streams, holds, closes
//   {url, kind: 'collab', path, cookie, csrf, bytes}         sends updates of about `bytes` in a loop
import http from 'node:http';

const spec = JSON.parse(process.argv[2]);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });
const counts = {};
let stopping = false;
const count = (status) => {
  counts[status] = (counts[status] ?? 0) + 1;
};

function request(path, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve) => {
    const req = http.request(`${spec.url}${path}`, { method, headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
      res.on('error', () => resolve('error'));
    });
    req.on('error', () => resolve('error'));
    req.end(body);
  });
}

async function loop(paths) {
  for (let i = 0; !stopping; i++) count(await request(paths[i % paths.length]));
}

async function streams() {
  const open = [];
  await Promise.all(
    Array.from(
      { length: spec.count },
      () =>
        new Promise((resolve) => {
          const req = http.get(`${spec.url}${spec.path}`, { agent: false }, (res) => {
            count(res.statusCode);
            res.on('data', () => {});
            res.on('error', () => {});
            open.push(req);
            resolve();
          });
          req.on('error', () => {
            count('error');
            resolve();
          });
        }),
    ),
  );
  process.stdout.write(`${JSON.stringify({ opened: open.length })}\n`);
  await new Promise((r) => setTimeout(r, spec.holdMs));
  for (const req of open) req.destroy();
  await new Promise((r) => setTimeout(r, 500));
}

/**
 * Updates of about `spec.bytes` in a loop, as fast as the server takes them: a 429 waits its
 * Retry-After, and any other refusal starts again from the server's document.
 */
async function collab() {
  const Y = await import(spec.yjs);
  const headers = {
    'content-type': 'application/json',
    cookie: spec.cookie,
    'x-csrf-token': spec.csrf,
  };
  const load = () =>
    new Promise((resolve) => {
      http.get(`${spec.url}${spec.path}`, { headers }, (res) => {
        let text = '';
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () => {
          const doc = new Y.Doc();
          Y.applyUpdate(doc, Buffer.from(JSON.parse(text).state, 'base64'));
          resolve(doc);
        });
      });
    });
  let doc = await load();
  for (let i = 0; !stopping; i++) {
    const text = doc.getText('content');
    const out = [];
    const listener = (u) => out.push(u);
    doc.on('update', listener);
    // Insert a block the size of the limit, or take one out again: the file stays small.
    if (text.length < spec.bytes) text.insert(0, String.fromCharCode(97 + (i % 26)).repeat(spec.bytes));
    else text.delete(0, spec.bytes);
    doc.off('update', listener);
    const body = JSON.stringify({
      update: Buffer.from(Y.mergeUpdates(out)).toString('base64'),
      client_id: 'attacker',
    });
    const { status, retryAfter } = await new Promise((resolve) => {
      const req = http.request(`${spec.url}${spec.path}`, { method: 'POST', headers, agent }, (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode, retryAfter: Number(res.headers['retry-after'] ?? 0) }),
        );
      });
      req.on('error', () => resolve({ status: 'error', retryAfter: 1 }));
      req.end(body);
    });
    count(status);
    if (status === 200) continue;
    if (status === 429) await new Promise((r) => setTimeout(r, retryAfter * 1000));
    doc.destroy();
    doc = await load();
  }
}

const stop = () => {
  stopping = true;
};
process.on('SIGTERM', stop);
if (spec.seconds) setTimeout(stop, spec.seconds * 1000);

const work =
  spec.kind === 'get'
    ? Promise.all(Array.from({ length: spec.concurrency }, () => loop(spec.paths)))
    : spec.kind === 'streams'
      ? streams()
      : collab();
await work;
process.stdout.write(`${JSON.stringify({ counts })}\n`);
process.exit(0);
