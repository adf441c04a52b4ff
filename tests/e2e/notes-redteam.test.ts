// rune notes attacked the way real clients misbehave, through the built binary on loopback: sockets
// held open without a request (half-open, slowloris) from the same address as a well-behaved
// client, whose /healthz (measured from a process of its own) must keep answering.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type NotesProcess, startNotesProcess } from '../helpers/notes.ts';
import { tempDir } from '../helpers/rune.ts';

const PROBE = join(__dirname, '..', 'helpers', 'healthz-probe.mjs');

const running: NotesProcess[] = [];
const sockets = new Set<net.Socket>();
afterEach(async () => {
  for (const s of sockets) s.destroy();
  sockets.clear();
  for (const s of running.splice(0)) await s.stop();
});

async function start(toml = `[notes.local]\nadmins = ["ada:adapass1"]\nusers = ["uma:umapass1"]\n`) {
  const home = tempDir('rune-notes-redteam-');
  writeFileSync(join(home, 'rune.toml'), toml);
  const server = await startNotesProcess({ home, args: ['--config', join(home, 'rune.toml')] });
  running.push(server);
  return server;
}

interface Probe {
  n: number;
  failed: number;
  p50: number | null;
  p99: number | null;
  max: number | null;
}

/** /healthz from another process, from `address` (127.0.0.1: the attacker's own address). */
function probe(url: string, ms: number, address = '127.0.0.1'): Promise<Probe> {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, [PROBE, url, String(ms), address], (error, stdout) =>
      error ? reject(error) : resolve(JSON.parse(stdout) as Probe),
    ),
  );
}

describe('sockets held open without a request', () => {
  it('do not lock a client of the same address out: half-open and slowloris sockets give way', async () => {
    const server = await start();
    const { port } = new URL(server.url);
    let opened = 0;
    let stopped = false;
    // 600 sockets from 127.0.0.1, more than the 256 one address may hold: half send nothing,
    // half send their headers a line a second and never finish; each one closed is opened again a
    // second later, as slowloris tools do.
    const open = (slow: boolean) => {
      if (stopped) return;
      opened++;
      const socket = net.connect(Number(port), '127.0.0.1');
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        sockets.delete(socket);
        setTimeout(() => open(slow), 1000);
      });
      if (slow) socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    };
    for (let i = 0; i < 600; i++) open(i % 2 === 0);
    const trickle = setInterval(() => {
      for (const s of sockets) if (!s.destroyed && s.writable) s.write('X-Slow: 1\r\n');
    }, 1000);
    try {
      await new Promise((r) => setTimeout(r, 1000));
      const result = await probe(server.url, 6000);
      console.log(
        `/healthz from the attacker's own address while it holds sockets open (${opened} opened): ${JSON.stringify(result)}`,
      );
      expect(result.failed).toBe(0);
      expect(result.n).toBeGreaterThan(50);
      expect(result.p99!).toBeLessThan(250);
    } finally {
      stopped = true;
      clearInterval(trickle);
    }
  }, 60_000);
});
