// An allowed *name* never opens the host's loopback, the private network or a cloud metadata
// service: the net guard lets a name lead only to public addresses, and to a restricted one only
// when that address is listed itself (`localhost` lists loopback). Tried through the built binary
// with names whose answers the test controls (its own /etc/hosts, bound in a private mount
// namespace), as the host runs rune (namespaces: the net guard) and under a container runtime's
// seccomp profile (no network at all), as root and as an unprivileged user. Controls: the same
// names reach the servers without the sandbox, and listing the address itself lets it through.
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../helpers/rune.ts';
import { battleground, containerProblem, IS_ROOT, runVariant, type Variant, variants } from './deputy-run.ts';
import { parseLayers } from './harness.ts';

const ground = battleground('rune-deputy-net-');
const hosts = join(ground.root, 'hosts');
const probe = join(ground.root, 'probe.py');
const servers: Server[] = [];
const hits = { v4: 0, v6: 0 };
let p4 = 0;
let p6 = 0;

/** Each "name:port" is resolved, then connected to at each address (port 0: resolved only). */
const PROBE = `import socket, sys
for spec in sys.argv[1:]:
    name, port = spec.rsplit(":", 1)
    try:
        addrs = sorted({ai[4][0] for ai in socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)})
    except OSError:
        addrs = []
    got = "-"
    for a in addrs if port != "0" else []:
        try:
            s = socket.socket(socket.AF_INET6 if ":" in a else socket.AF_INET)
            s.settimeout(3)
            s.connect((a, int(port)))
            got = s.recv(100).decode().strip()
            break
        except OSError as e:
            got = type(e).__name__
    print(name, ",".join(addrs) or "unresolved", got)
`;

function listen(host: string, banner: string, count: () => void): Promise<number> {
  const server = createServer((socket) => {
    count();
    socket.end(`${banner}\n`);
  });
  servers.push(server);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve((server.address() as { port: number }).port));
  });
}

beforeAll(async () => {
  p4 = await listen('127.0.0.1', 'LOOPBACK-V4', () => {
    hits.v4++;
  });
  p6 = await listen('::1', 'LOOPBACK-V6', () => {
    hits.v6++;
  });
  writeFileSync(
    hosts,
    [
      '127.0.0.1 localhost',
      '::1 localhost ip6-localhost',
      '127.0.0.1 lo4.rune-test',
      '::1 lo6.rune-test',
      '10.1.2.3 private.rune-test',
      '169.254.169.254 metadata.rune-test',
      '100.64.7.7 cgnat.rune-test',
      '93.184.216.34 public.rune-test',
      '',
    ].join('\n'),
  );
  writeFileSync(probe, PROBE);
});

afterAll(() => {
  for (const server of servers) server.close();
  ground.cleanup();
});

/** A private mount namespace whose /etc/hosts is the test's (as root; else in a user namespace too). */
const withHosts = (): string[] => [
  '/usr/bin/unshare',
  ...(IS_ROOT ? [] : ['--user', '--map-root-user']),
  '--mount',
  '--propagation',
  'private',
  '--',
  '/bin/sh',
  '-c',
  'mount --bind "$0" /etc/hosts && exec "$@"',
  hosts,
];

const NAMES = [
  'lo4.rune-test',
  'lo6.rune-test',
  'private.rune-test',
  'metadata.rune-test',
  'cgnat.rune-test',
];

function sandbox(v: Variant, name: string, flags: string[], global: string[] = []): Promise<RunResult> {
  const home = ground.dir(`${v.mode}-${v.who}-${name}/home`, v.who);
  const cwd = ground.dir(`${v.mode}-${v.who}-${name}/work`, v.who);
  return runVariant(v, {
    wrap: withHosts(),
    args: [
      ...global,
      'sandbox',
      '--layers',
      '--allow-read',
      ground.root,
      ...flags,
      '--',
      '/usr/bin/python3',
      probe,
      `lo4.rune-test:${p4}`,
      `lo6.rune-test:${p6}`,
      `127.0.0.1:${p4}`,
      'private.rune-test:0',
      'metadata.rune-test:0',
      'cgnat.rune-test:0',
      'public.rune-test:0',
    ],
    cwd,
    env: { PATH: '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8' },
  });
}

/** "name addresses reached" lines of the probe, by name. */
function seen(r: RunResult): Map<string, { addrs: string; got: string }> {
  const out = new Map<string, { addrs: string; got: string }>();
  for (const line of r.stdout.trim().split('\n')) {
    const [name, addrs, got] = line.split(' ');
    if (name && addrs && got) out.set(name, { addrs, got });
  }
  return out;
}

const container = containerProblem();

for (const v of variants()) {
  describe.skipIf(v.mode === 'container' && container !== undefined)(
    `an allowed name never leads to a restricted address (${v.label})`,
    () => {
      let attack: RunResult;
      let listed: RunResult;
      let off: RunResult;
      const before = { v4: 0, v6: 0 };
      const during = { v4: 0, v6: 0 };

      beforeAll(async () => {
        Object.assign(before, hits);
        attack = await sandbox(
          v,
          'attack',
          [...NAMES, 'public.rune-test'].flatMap((name) => ['--allow-domain', name]),
        );
        Object.assign(during, { v4: hits.v4 - before.v4, v6: hits.v6 - before.v6 });
        listed = await sandbox(
          v,
          'listed',
          [...NAMES, `127.0.0.1:${p4}`, `[::1]:${p6}`, '10.1.2.3', '169.254.169.254'].flatMap((name) => [
            '--allow-domain',
            name,
          ]),
        );
        off = await sandbox(v, 'off', [], ['--sandbox', 'off']);
      });

      it('a name resolving to 127.0.0.1 reaches nothing, nor does 127.0.0.1 itself; controls: the address listed, and no sandbox', () => {
        const a = seen(attack);
        expect(a.get('lo4.rune-test')?.got).not.toBe('LOOPBACK-V4');
        expect(a.get('127.0.0.1')?.got).not.toBe('LOOPBACK-V4');
        expect(during.v4).toBe(0);
        expect(parseLayers(attack.stderr).get('dns')?.detail).toContain(
          'refused: lo4.rune-test → 127.0.0.1 is a loopback, private or reserved address',
        );
        expect(seen(off).get('lo4.rune-test')?.got).toBe('LOOPBACK-V4');
        // The net guard exists only with namespaces; without them no socket reaches anything.
        if (v.mode === 'host') expect(seen(listed).get('lo4.rune-test')?.got).toBe('LOOPBACK-V4');
        else expect(seen(listed).get('lo4.rune-test')?.got).not.toBe('LOOPBACK-V4');
      });

      it('a name resolving to ::1 reaches nothing; controls: [::1]:PORT listed, and no sandbox', () => {
        const a = seen(attack);
        expect(a.get('lo6.rune-test')?.got).not.toBe('LOOPBACK-V6');
        expect(during.v6).toBe(0);
        expect(parseLayers(attack.stderr).get('dns')?.detail).toContain('lo6.rune-test → ::1 is a loopback');
        expect(seen(off).get('lo6.rune-test')?.got).toBe('LOOPBACK-V6');
        if (v.mode === 'host') expect(seen(listed).get('lo6.rune-test')?.got).toBe('LOOPBACK-V6');
      });

      it('names resolving to 10.1.2.3, 169.254.169.254 and 100.64.7.7 are refused and said so; control: a public answer passes, a listed address too', () => {
        const detail = parseLayers(attack.stderr).get('dns')?.detail ?? '';
        expect(detail).toContain('private.rune-test → 10.1.2.3 is a loopback, private or reserved address');
        expect(detail).toContain(
          'metadata.rune-test → 169.254.169.254 is a link-local address (cloud metadata lives there)',
        );
        expect(detail).toContain('cgnat.rune-test → 100.64.7.7 is a loopback, private or reserved address');
        expect(detail).not.toContain('public.rune-test');
        const listedDetail = parseLayers(listed.stderr).get('dns')?.detail ?? '';
        expect(listedDetail).not.toContain('private.rune-test →');
        expect(listedDetail).not.toContain('metadata.rune-test →');
        expect(listedDetail).toContain('cgnat.rune-test → 100.64.7.7');
        if (v.mode === 'host') {
          // Inside, only what the guard lets through resolves (the view's /etc/hosts).
          const a = seen(attack);
          expect(a.get('private.rune-test')?.addrs).toBe('unresolved');
          expect(a.get('metadata.rune-test')?.addrs).toBe('unresolved');
          expect(a.get('cgnat.rune-test')?.addrs).toBe('unresolved');
          expect(a.get('public.rune-test')?.addrs).toBe('93.184.216.34');
          const l = seen(listed);
          expect(l.get('private.rune-test')?.addrs).toBe('10.1.2.3');
          expect(l.get('metadata.rune-test')?.addrs).toBe('169.254.169.254');
          expect(l.get('cgnat.rune-test')?.addrs).toBe('unresolved');
        } else {
          expect(parseLayers(attack.stderr).get('network')?.detail).toMatch(
            /seccomp refuses inet and inet6 sockets/,
          );
        }
      });
    },
  );
}
