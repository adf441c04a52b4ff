// Edit → SSE fan-out, shared by bench/notes.mjs and bench/notes-public.mjs: `clients` event streams
// of a note (in a few processes of their own, so their parsing does not queue behind each other;
// times come from the monotonic clock, which all processes share), a save (PUT) at a time, and the
// delay until every stream has its `file.saved`. Optionally `typists` people type into another file
// of the note meanwhile (a collaborative update each per `typeEveryMs`). With `follow`, every stream
// is a tab that has the saved file open and says so (`GET …/collab?client_id=`, as the web client
// does): the typists' updates of their own files are not sent to it. Without, every stream receives
// every update.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpuMicros } from './lib.mjs';

const sum = (values) => values.reduce((a, b) => a + b, 0);

const WORKERS = 4;
// Each stream is a bare socket that reads bytes (what a client of the goal receives is the bytes;
// a full HTTP and SSE parser per stream in 4 processes on the server's own 2 cores would be measured
// as the server's latency). A worker reports once per save, when all its streams have it.
const clientScript = `
  const net = require('node:net');
  const [port, base, count, auth] = [Number(process.argv[1]), process.argv[2], Number(process.argv[3]), process.argv[4]];
  let ready = 0;
  const arrivals = new Map();
  for (let i = 0; i < count; i++) {
    const path = base + '&client_id=' + process.argv[5] + '-' + i;
    const socket = net.connect(port, '127.0.0.1', () =>
      socket.write('GET ' + path + ' HTTP/1.1\\r\\nHost: bench\\r\\nAuthorization: ' + auth + '\\r\\n\\r\\n'));
    let buffer = '';
    let hello = false;
    socket.setEncoding('latin1').on('data', (chunk) => {
      const at = process.hrtime.bigint();
      buffer += chunk;
      if (!hello) {
        if (!buffer.startsWith('HTTP/1.1 200')) { if (buffer.includes('\\r\\n')) { process.stderr.write('stream answered ' + buffer.slice(0, 12) + '\\n'); process.exit(1); } return; }
        if (!buffer.includes('event: hello')) return;
        hello = true;
        if (++ready === count) process.stdout.write('ready\\n');
      }
      let i = buffer.indexOf('event: file.saved');
      while (i >= 0) {
        const end = buffer.indexOf('\\n\\n', i);
        if (end < 0) break;
        const revision = /"revision":(\\d+)/.exec(buffer.slice(i, end))[1];
        const times = arrivals.get(revision) ?? [];
        arrivals.set(revision, times);
        times.push(at);
        if (times.length === count) { process.stdout.write(revision + ' ' + times.join(' ') + '\\n'); arrivals.delete(revision); }
        buffer = buffer.slice(end + 2);
        i = buffer.indexOf('event: file.saved');
      }
      if (buffer.length > 100000) buffer = buffer.slice(-1000);
    });
  }`;

/**
 * Opens the streams, makes `edits` saves of `file` (after `warmup` that only warm up), and returns
 * the delays of every delivery (ms) and the slowest delivery of the warm-up.
 */
export async function fanOut({
  url,
  api,
  note,
  file,
  clients,
  edits = 30,
  warmup = 3,
  typists = 0,
  typeEveryMs = 200,
  Y,
  pid,
  follow = false,
}) {
  const delays = [];
  /** revision → {sent (ns), count, resolve} */
  const waiting = new Map();
  const workers = [];
  await Promise.all(
    Array.from({ length: WORKERS }, (_, w) => {
      const count = Math.floor(clients / WORKERS) + (w < clients % WORKERS ? 1 : 0);
      const child = spawn(
        process.execPath,
        [
          '-e',
          clientScript,
          new URL(url).port,
          `/api/events?note_id=${note}`,
          String(count),
          `Bearer ${api.token}`,
          `tab${w}`,
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      workers.push(child);
      return new Promise((resolve, reject) => {
        child.once('exit', (code) => code && reject(new Error(`stream client exited ${code}`)));
        let rest = '';
        child.stdout.setEncoding('utf8').on('data', (chunk) => {
          const lines = (rest + chunk).split('\n');
          rest = lines.pop();
          for (const line of lines) {
            if (line === 'ready') resolve();
            else {
              const [revision, ...times] = line.split(' ');
              const wait = waiting.get(Number(revision));
              if (!wait) continue;
              for (const at of times) delays.push(Number(BigInt(at) - wait.sent) / 1e6);
              wait.count += times.length;
              if (wait.count === clients) wait.resolve();
            }
          }
        });
      });
    }),
  );
  if (follow) {
    // In groups, as tabs opening the note would: each says which file it has open.
    const tabs = workers.flatMap((_, w) =>
      Array.from(
        { length: Math.floor(clients / WORKERS) + (w < clients % WORKERS ? 1 : 0) },
        (_, i) => `tab${w}-${i}`,
      ),
    );
    for (let i = 0; i < tabs.length; i += 32) {
      await Promise.all(
        tabs.slice(i, i + 32).map(async (tab) => {
          const res = await api(`/api/notes/${note}/files/${file}/collab?client_id=${tab}`);
          if (res.status !== 200) throw new Error(`follow ${tab}: ${res.status} ${res.body}`);
        }),
      );
    }
  }
  const typing = typists > 0 ? await startTypists({ api, note, typists, typeEveryMs, Y }) : null;
  const path = `/api/notes/${note}/files/${file}`;
  let revision = JSON.parse((await api(path)).body).revision;
  let coldMax = 0;
  // CPU time of the server (`pid`, when given) and of the stream clients over the measured saves.
  let cpu = null;
  const ticks = () => {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return { user: Number(fields[11]), system: Number(fields[12]) };
  };
  let ticksBefore;
  const cpuNow = () => ({
    server: pid ? cpuMicros(pid) : 0,
    clients: sum(workers.map((w) => cpuMicros(w.pid))),
  });
  for (let i = 0; i < edits + warmup; i++) {
    if (i === warmup) {
      coldMax = Math.max(0, ...delays);
      delays.length = 0;
      cpu = cpuNow();
      ticksBefore = pid ? ticks() : null;
    }
    const all = new Promise((resolve) =>
      waiting.set(revision + 1, { sent: process.hrtime.bigint(), count: 0, resolve }),
    );
    const put = await api(path, 'PUT', { content: `# Bench edit ${i}\n`, base_revision: revision });
    if (put.status !== 200) throw new Error(`PUT ${path}: ${put.status} ${put.body}`);
    revision = JSON.parse(put.body).revision;
    await all;
  }
  const after = cpuNow();
  const ticksAfter = pid ? ticks() : null;
  const kernelShare = pid
    ? (ticksAfter.system - ticksBefore.system) /
      Math.max(1, ticksAfter.system - ticksBefore.system + ticksAfter.user - ticksBefore.user)
    : null;
  const cpuMsPerEdit = {
    server: (after.server - cpu.server) / 1000 / edits,
    clients: (after.clients - cpu.clients) / 1000 / edits,
  };
  const typed = typing ? await typing.stop() : 0;
  for (const child of workers) child.kill();
  return { delays, coldMax, typed, cpuMsPerEdit, kernelShare };
}

/** `typists` people typing into a file of their own each, one update per `typeEveryMs`. */
async function startTypists({ api, note, typists, typeEveryMs, Y }) {
  let stop = false;
  let typed = 0;
  const loops = [];
  for (let t = 0; t < typists; t++) {
    const name = `typist-${t}-${Date.now()}.md`;
    const made = await api(`/api/notes/${note}/files`, 'POST', { name, content: '' });
    if (made.status !== 201) throw new Error(`typist file: ${made.status} ${made.body}`);
    const collab = `/api/notes/${note}/files/${encodeURIComponent(name)}/collab`;
    const doc = new Y.Doc();
    Y.applyUpdate(doc, Buffer.from(JSON.parse((await api(collab)).body).state, 'base64'));
    loops.push(
      (async () => {
        while (!stop) {
          let update;
          const grab = (u) => {
            update = u;
          };
          doc.on('update', grab);
          doc.getText('content').insert(doc.getText('content').length, 'typed ');
          doc.off('update', grab);
          const res = await api(collab, 'POST', {
            update: Buffer.from(update).toString('base64'),
            client_id: `typist-${t}`,
          });
          if (res.status !== 200) throw new Error(`typist ${t}: ${res.status} ${res.body}`);
          typed++;
          await new Promise((r) => setTimeout(r, typeEveryMs));
        }
      })(),
    );
  }
  return {
    async stop() {
      stop = true;
      await Promise.all(loops);
      return typed;
    },
  };
}
