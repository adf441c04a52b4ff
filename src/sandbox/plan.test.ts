import { describe, expect, it } from 'vitest';
import { floorPaths, HOME_CREDENTIAL_STORES } from '../policy/paths.ts';
import { helperArgsFor } from './entry.ts';
import {
  describeView,
  hiddenPaths,
  isInside,
  isUnspecifiedAddress,
  type PlanInput,
  parseReport,
  planHelperArgs,
  protectedCandidates,
} from './plan.ts';

const base: PlanInput = {
  request: {
    argv: ['/bin/sh', '-c', 'ls'],
    cwd: '/work/p',
    readOnlyPaths: ['ref'],
    readWritePaths: ['/work/p/out'],
    allowedDomains: [],
  },
  strict: false,
  namespaces: true,
  protectedPaths: ['/work/p/out/.env'],
  pinPaths: ['/work/p/out/.git'],
  hidePaths: ['/etc/shadow'],
  resolved: [],
  limits: { fsizeBytes: 1024, nofile: 64, tmpMb: 8 },
  reportFd: 3,
};

const pairs = (args: string[], flag: string) => args.flatMap((a, i) => (a === flag ? [args[i + 1]] : []));

describe('planHelperArgs', () => {
  it('makes the working directory and relative paths absolute, read-only unless listed writable', () => {
    const { args } = planHelperArgs(base);
    expect(pairs(args, '--ro')).toEqual(['/work/p', '/work/p/ref']);
    expect(pairs(args, '--rw')).toEqual(['/work/p/out']);
    expect(pairs(args, '--protect')).toEqual(['/work/p/out/.env']);
    expect(pairs(args, '--cwd')).toEqual(['/work/p']);
    expect(args.slice(args.indexOf('--') + 1)).toEqual(['/bin/sh', '-c', 'ls']);
  });

  it('builds the view from system folders and grants only (the helper makes /proc, /sys, /dev, /tmp)', () => {
    const { args } = planHelperArgs(base);
    expect(pairs(args, '--sys')).toEqual([
      '/usr',
      '/bin',
      '/sbin',
      '/lib',
      '/lib32',
      '/lib64',
      '/libx32',
      '/etc',
      '/opt',
    ]);
    for (const own of ['/proc', '/sys', '/dev', '/dev/null', '/dev/pts', '/tmp', '/dev/shm'])
      expect([...pairs(args, '--ro'), ...pairs(args, '--rw'), ...pairs(args, '--sys')]).not.toContain(own);
  });

  it('a path granted both ways is writable, not also read-only', () => {
    const { args } = planHelperArgs({ ...base, request: { ...base.request, readWritePaths: ['/work/p'] } });
    expect(pairs(args, '--rw')).toEqual(['/work/p']);
    expect(pairs(args, '--ro')).toEqual(['/work/p/ref']);
  });

  it('passes a grant named through a symlink as a link to its real path', () => {
    const { args } = planHelperArgs({ ...base, links: [{ path: '/work/p/docs', target: '/home/u' }] });
    const at = args.indexOf('--link');
    expect(args.slice(at, at + 3)).toEqual(['--link', '/work/p/docs', '/home/u']);
  });

  it("makes the command's TMPDIR in the private /tmp when it lies there, and only then", () => {
    expect(pairs(planHelperArgs({ ...base, tmpDir: '/tmp/user/1000' }).args, '--tmpdir')).toEqual([
      '/tmp/user/1000',
    ]);
    expect(planHelperArgs({ ...base, tmpDir: '/var/tmp' }).args).not.toContain('--tmpdir');
    expect(planHelperArgs({ ...base, tmpDir: 'relative' }).args).not.toContain('--tmpdir');
  });

  it('says --no-namespaces when the machine has none', () => {
    expect(planHelperArgs({ ...base, namespaces: false }).args).toContain('--no-namespaces');
    expect(planHelperArgs(base).args).not.toContain('--no-namespaces');
  });

  it('allows exactly the resolved addresses and writes them into the hosts list', () => {
    const { args, notes } = planHelperArgs({
      ...base,
      request: { ...base.request, allowedDomains: ['api.example.com', '*.cdn.example', 'gone.example'] },
      resolved: [
        { name: 'api.example.com', addresses: ['93.184.216.34', '2606:2800::1'] },
        { name: 'gone.example', addresses: [] },
      ],
    });
    expect(pairs(args, '--allow-addr')).toEqual(['93.184.216.34', '2606:2800::1']);
    expect(pairs(args, '--host')).toEqual(['93.184.216.34 api.example.com', '2606:2800::1 api.example.com']);
    expect(notes[0]?.detail).toMatch(/wildcards cannot be resolved ahead: \*\.cdn\.example/);
    expect(notes[0]?.detail).toMatch(/did not resolve: gone\.example/);
  });

  it('names an allowed entry that resolves to an unspecified address (the guard refuses it)', () => {
    const { args, notes } = planHelperArgs({
      ...base,
      request: { ...base.request, allowedDomains: ['sinkholed.example', 'api.example.com', '0.0.0.0'] },
      resolved: [
        { name: 'sinkholed.example', addresses: ['0.0.0.0', '::'] },
        { name: 'api.example.com', addresses: ['93.184.216.34'] },
        { name: '0.0.0.0', addresses: ['0.0.0.0'] },
      ],
    });
    expect(pairs(args, '--host')).toEqual(['0.0.0.0 sinkholed.example', '93.184.216.34 api.example.com']);
    expect(notes[0]?.detail).toBe(
      'an allowed name leads to a loopback, private or link-local address only when that address is listed itself; refused: sinkholed.example → :: is an unspecified address: this host to Linux, every local listener; an unspecified address means this host and is never allowed: sinkholed.example (0.0.0.0), 0.0.0.0',
    );
  });

  it('a name leads to a loopback, private or link-local address only where that address is listed itself', () => {
    // Attack: the DNS of an allowed name is someone else's; it answers with the host's loopback,
    // the private network or the cloud metadata service, to open every port there.
    const { args, notes } = planHelperArgs({
      ...base,
      request: {
        ...base.request,
        allowedDomains: ['api.example.com', 'db.corp:5432', '10.0.0.5:5432', 'localhost:8080', '[fd00::7]'],
      },
      resolved: [
        {
          name: 'api.example.com',
          addresses: ['93.184.216.34', '127.0.0.1', '::1', '169.254.169.254', '10.1.2.3', '::ffff:10.1.2.3'],
        },
        {
          name: 'db.corp',
          port: 5432,
          entry: 'db.corp:5432',
          addresses: ['10.0.0.5', 'fd00::7', '100.64.1.1'],
        },
        { name: '10.0.0.5', port: 5432, entry: '10.0.0.5:5432', addresses: ['10.0.0.5'] },
        { name: 'localhost', port: 8080, entry: 'localhost:8080', addresses: ['127.0.0.1', '::1'] },
        { name: 'fd00::7', addresses: ['fd00::7'] },
      ],
    });
    expect(pairs(args, '--allow-addr')).toEqual([
      '93.184.216.34',
      '127.0.0.1:8080',
      '[::1]:8080',
      '10.0.0.5:5432',
      'fd00::7',
    ]);
    expect(pairs(args, '--host')).toEqual([
      '93.184.216.34 api.example.com',
      '127.0.0.1 api.example.com',
      '::1 api.example.com',
      '10.0.0.5 db.corp',
      'fd00::7 db.corp',
      '127.0.0.1 localhost',
      '::1 localhost',
    ]);
    expect(notes[0]?.detail).toBe(
      'an allowed name leads to a loopback, private or link-local address only when that address is listed itself; refused: api.example.com → 169.254.169.254 is a link-local address (cloud metadata lives there); api.example.com → 10.1.2.3 is a loopback, private or reserved address; api.example.com → 10.1.2.3 is a loopback, private or reserved address; db.corp:5432 → 100.64.1.1 is a loopback, private or reserved address',
    );
  });

  it.each([
    ['0.0.0.0', true],
    ['0.1.2.3', true],
    ['::', true],
    ['0:0:0:0:0:0:0:0', true],
    ['::1', false],
    ['10.0.0.1', false],
    ['::ffff:0.0.0.0', true],
    ['::ffff:10.0.0.1', false],
  ])('isUnspecifiedAddress(%s) = %s', (address, expected) => {
    expect(isUnspecifiedAddress(address)).toBe(expected);
  });

  it('carries the port of a name:port entry to the guard and keeps IP literals out of /etc/hosts', () => {
    const { args, notes } = planHelperArgs({
      ...base,
      resolved: [
        {
          name: 'api.example.com',
          port: 443,
          entry: 'api.example.com:443',
          addresses: ['93.184.216.34', '2606:2800::1'],
        },
        { name: 'api.example.com', port: 8443, entry: 'api.example.com:8443', addresses: ['93.184.216.34'] },
        { name: '10.9.8.7', port: 5432, addresses: ['10.9.8.7'] },
        { name: 'gone.example', port: 1, entry: 'gone.example:1', addresses: [] },
      ],
    });
    expect(pairs(args, '--allow-addr')).toEqual([
      '93.184.216.34:443',
      '[2606:2800::1]:443',
      '93.184.216.34:8443',
      '10.9.8.7:5432',
    ]);
    expect(pairs(args, '--host')).toEqual(['93.184.216.34 api.example.com', '2606:2800::1 api.example.com']);
    expect(notes[0]?.detail).toMatch(/did not resolve: gone\.example:1/);
  });

  it('passes strict mode on so the helper refuses to start with a missing layer', () => {
    expect(planHelperArgs({ ...base, strict: true }).args).toContain('--strict');
    expect(planHelperArgs(base).args).not.toContain('--strict');
  });
});

describe('protected paths', () => {
  it('covers rune config and every .env file at the root (git folders: git.ts)', () => {
    expect(protectedCandidates('/r', ['.env', '.env.local', 'src', '.envrc'])).toEqual([
      '/r/rune.toml',
      '/r/.rune',
      '/r/.env',
      '/r/.env.local',
      '/r/.envrc',
    ]);
  });

  it.each([
    ['/a/b', '/a', true],
    ['/a', '/a', true],
    ['/ab', '/a', false],
    ['/', '/a', false],
    ['/a', '/', true],
    ['/', '/', true],
    ['/a/b/', '/a', true],
    ['/a/b', '/a/', true],
    ['/a/../b', '/a', false],
    ['/a/./b', '/a', true],
    ['/a//b', '/a', true],
    ['/b/../a/c', '/a', true],
    ['/a/..', '/a', false],
    ['/a/..b', '/a', true],
    ['/a/..b/', '/a', true],
    ['/a/x/../..b', '/a', true],
    ['/a/.b', '/a', true],
    ['a/b', '/a', false],
  ])('isInside(%j, %j) is %s', (child, parent, inside) => {
    expect(isInside(child, parent)).toBe(inside);
  });
});

describe('the view report', () => {
  it('names read-only and writable binds, what is hidden and which host folders are absent', () => {
    const { view } = planHelperArgs(base);
    const text = describeView(view);
    expect(text).toMatch(/read-only: \/usr .*\/etc .*\/work\/p \/work\/p\/ref/);
    expect(text).toMatch(/writable: \/tmp \(private\) \/dev\/shm \(private\) \/work\/p\/out/);
    expect(text).toMatch(/read-only inside writable: \/work\/p\/out\/\.env/);
    expect(text).toMatch(/hidden: \/etc\/shadow/);
    expect(text).toMatch(/absent: \/home \/root \/run \/var \/srv/);
  });

  it('does not call a folder absent when a grant lives in it', () => {
    const { view } = planHelperArgs({
      ...base,
      request: { ...base.request, readWritePaths: ['/var/tmp/build'] },
    });
    expect(view.absent).not.toContain('/var');
    expect(view.absent).toContain('/home');
  });
});

describe('hiddenPaths', () => {
  it('decides on real paths: a grant reaching the home folder through a symlink still hides its stores', () => {
    // docs -> /home/u: the executor passes the real root; the stores are hidden at their real place.
    const real = (p: string) => (p.startsWith('/work/p/docs') ? p.replace('/work/p/docs', '/home/u') : p);
    const hidden = hiddenPaths('/home/u', [], ['/work/p', '/home/u'], ['/work/p/docs'], real);
    expect(hidden).toEqual(expect.arrayContaining(['/home/u/.ssh', '/home/u/.aws']));
  });

  it('hides a store that is itself a symlink at its target too', () => {
    const real = (p: string) => (p === '/home/u/.ssh' ? '/data/keys' : p);
    const hidden = hiddenPaths('/home/u', [], ['/home/u', '/data'], [], real);
    expect(hidden).toEqual(expect.arrayContaining(['/home/u/.ssh', '/data/keys']));
  });

  it('keeps a store granted by name, under either of its names', () => {
    const real = (p: string) => (p === '/home/u/aws-link' ? '/home/u/.aws' : p);
    expect(hiddenPaths('/home/u', [], ['/home/u'], ['/home/u/aws-link'], real)).not.toContain('/home/u/.aws');
  });

  it('hides the backups and variants of the system secrets', () => {
    expect(hiddenPaths(undefined, [], ['/etc'], [])).toEqual(
      expect.arrayContaining(['/etc/shadow-', '/etc/gshadow-', '/etc/sudoers.d', '/etc/ssl/private']),
    );
  });

  it('hides system secrets, denied paths (with ~) and home credentials not allowed by name', () => {
    const hidden = hiddenPaths(
      '/home/u',
      ['~/private', '/srv/secret', '/opt/x'],
      ['/etc', '/home/u', '/srv'],
      ['/home/u/.aws'],
    );
    expect(hidden).toEqual(
      expect.arrayContaining(['/etc/shadow', '/home/u/private', '/srv/secret', '/home/u/.ssh']),
    );
    expect(hidden).not.toContain('/home/u/.aws');
    // Outside every allowed root Landlock refuses it already (and says EACCES).
    expect(hidden).not.toContain('/opt/x');
    expect(hiddenPaths('/home/u', [], ['/etc'], [])).not.toContain('/home/u/.ssh');
  });

  it("hides every credential store of the policy's floor, not only some", () => {
    const hidden = hiddenPaths('/home/u', [], ['/home/u'], []);
    expect(HOME_CREDENTIAL_STORES.length).toBeGreaterThan(0);
    for (const store of HOME_CREDENTIAL_STORES) expect(hidden).toContain(`/home/u/${store}`);
    // Each store is a secret of the policy's floor too: refused to every tool, not only hidden.
    const floor = floorPaths('/home/u', '/home/u/.rune');
    for (const store of HOME_CREDENTIAL_STORES) expect(floor).toContain(`/home/u/${store}`);
  });
});

describe('parseReport', () => {
  it('keeps every line of a layer: what stood in for a missing namespace is not overwritten', () => {
    const { layers } = parseReport(
      [
        'namespaces\tskipped\tnot used for this call (--no-namespaces)',
        'namespaces\tskipped\tno view: seccomp refuses new UNIX sockets',
        'seccomp\tapplied\tx86_64 only',
        'seccomp\tapplied\tstanding in for the missing view',
      ].join('\n'),
    );
    expect(layers.get('namespaces')).toEqual({
      layer: 'namespaces',
      applied: false,
      detail: 'not used for this call (--no-namespaces); no view: seccomp refuses new UNIX sockets',
    });
    expect(layers.get('seccomp')?.detail).toBe('x86_64 only; standing in for the missing view');
  });

  it('keeps a layer applied when one of its steps was skipped, and surfaces setup failures', () => {
    const { layers, setupError } = parseReport(
      [
        'namespaces\tskipped\tprivate /proc: EPERM',
        'namespaces\tapplied\tuser+mount+pid',
        'landlock\tapplied\tABI 7',
        'seccomp\tfailed\tseccomp filter: EINVAL',
        'setup\tfailed\tstrict mode: a layer could not be applied',
        '',
      ].join('\n'),
    );
    expect(layers.get('namespaces')).toMatchObject({ applied: true });
    expect(layers.get('namespaces')?.detail).toMatch(/private \/proc: EPERM/);
    expect(layers.get('seccomp')).toMatchObject({ applied: false });
    expect(setupError).toMatch(/strict mode/);
  });
});

describe('hidden subcommands', () => {
  it('_landlock maps --ro/--rw and switches the other layers off', () => {
    expect(helperArgsFor('_landlock', ['--ro', '/usr', '--rw', '/tmp/x', '--', 'ls', '-l'])).toEqual([
      '--no-namespaces',
      '--no-seccomp',
      '--ro',
      '/usr',
      '--rw',
      '/tmp/x',
      '--',
      'ls',
      '-l',
    ]);
  });

  it('_net-guard turns allowed domains into addresses and hosts lines', () => {
    const args = helperArgsFor('_net-guard', ['--allow-domain', 'a.test', '--', 'curl', 'a.test'], () => [
      '93.184.216.34',
    ]);
    expect(pairs(args, '--allow-addr')).toEqual(['93.184.216.34']);
    expect(pairs(args, '--host')).toEqual(['93.184.216.34 a.test']);
  });

  it('_net-guard leaves out a restricted address of a name unless it is listed itself', () => {
    const resolve = () => ['127.0.0.1', '93.184.216.34'];
    const args = helperArgsFor('_net-guard', ['--allow-domain', 'a.test', '--', 'x'], resolve);
    expect(pairs(args, '--allow-addr')).toEqual(['93.184.216.34']);
    expect(pairs(args, '--host')).toEqual(['93.184.216.34 a.test']);
    const listed = helperArgsFor(
      '_net-guard',
      ['--allow-domain', 'a.test', '--allow-domain', '127.0.0.1:9', '--', 'x'],
      resolve,
    );
    expect(pairs(listed, '--allow-addr')).toEqual(['127.0.0.1:9', '93.184.216.34']);
  });

  it('_net-guard keeps the port of a name:port entry and takes an IP literal as is', () => {
    const resolve = (name: string) => (name === 'a.test' ? ['93.184.216.34', '2606:2800::1'] : []);
    const args = helperArgsFor(
      '_net-guard',
      ['--allow-domain', 'a.test:8443', '--allow-domain', '[::1]:9', '--', 'x'],
      resolve,
    );
    expect(pairs(args, '--allow-addr')).toEqual(['93.184.216.34:8443', '[2606:2800::1]:8443', '[::1]:9']);
    expect(pairs(args, '--host')).toEqual(['93.184.216.34 a.test', '2606:2800::1 a.test']);
    expect(() => helperArgsFor('_net-guard', ['--allow-domain', '*.a.test', '--', 'x'])).toThrow(/wildcard/);
  });

  it('rejects a missing command or a flag of another subcommand', () => {
    expect(() => helperArgsFor('_seccomp', ['--'])).toThrow(/no command after --/);
    expect(() => helperArgsFor('_seccomp', ['--ro', '/', '--', 'ls'])).toThrow(/unexpected --ro/);
  });
});
