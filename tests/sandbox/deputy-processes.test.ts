// Nothing a tool starts outlives its call, and nothing in a call reads rune's own secrets, tried as
// an attacker would through the built binary: as the host runs rune (PID namespace) and under a
// container runtime's seccomp profile (no namespace at all: the helper is the call's child
// subreaper, seccomp keeps every process in the call's group), as root and as an unprivileged
// user. Each case has a control that shows the attack works where nothing contains it (`--sandbox
// off`) or that the probe really sees what it looks for.
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockLlm, startMockLlm } from '../helpers/mock-llm.ts';
import {
  battleground,
  containerProblem,
  giveTo,
  IS_ROOT,
  killAll,
  pause,
  processesWith,
  runVariant,
  survivors,
  uniqueMarker,
  type Variant,
  variants,
} from './deputy-run.ts';

const PY = '/usr/bin/python3';
const KEY = 'sk-deputy-PLANTED-ARGV-7c1e9a';
const ENV_KEY = 'sk-deputy-PLANTED-ENV-52b0d4';

const ground = battleground('rune-deputy-proc-');
let mock: MockLlm;
const markers: string[] = [];

beforeAll(async () => {
  mock = await startMockLlm();
});

afterAll(async () => {
  for (const marker of markers) killAll(marker);
  await mock.close();
  ground.cleanup();
});

/** The tool results the model saw in its `index`th request. */
function toolMessages(index: number): { role: string; content?: string }[] {
  const messages: { role: string; content?: string }[] = mock.requests[index]?.body?.messages ?? [];
  return messages.filter((msg) => msg.role === 'tool');
}

function marker(): string {
  const m = uniqueMarker();
  markers.push(m);
  return m;
}

/** A fresh HOME and working folder for one run of a variant, owned by its user. */
function place(v: Variant, name: string) {
  const tag = `${v.mode}-${v.who}-${name}`;
  const home = ground.dir(`${tag}/home`, v.who);
  const work = ground.dir(`${tag}/work`, v.who);
  const env = { PATH: '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8' };
  return { home, work, env };
}

function sandbox(v: Variant, name: string, script: string, global: string[] = [], extraEnv = {}) {
  const { work, env } = place(v, name);
  return runVariant(v, {
    args: [...global, 'sandbox', '--allow-write', work, '--', '/bin/sh', '-c', script],
    cwd: work,
    env: { ...env, ...extraEnv },
  });
}

/** setsid(1), and a child that tries setsid(2) itself and carries on when refused. */
const SETSID = (m: string) => `setsid sleep ${m} >/dev/null 2>&1 </dev/null &
${PY} -c 'import os
try: os.setsid()
except OSError: pass
os.execvp("sleep", ["sleep", "${m}"])' >/dev/null 2>&1 </dev/null &
sleep 0.3; echo started`;

/** A daemon as daemon(3) makes one (fork, setsid, fork, stdio to /dev/null), and a setpgid escape. */
const DAEMON = (m: string) => `${PY} -c 'import os
if os.fork() == 0:
    try: os.setsid()
    except OSError: pass
    if os.fork() == 0:
        fd = os.open("/dev/null", os.O_RDWR)
        for n in (0, 1, 2): os.dup2(fd, n)
        os.execvp("sleep", ["sleep", "${m}"])
    os._exit(0)
if os.fork() == 0:
    try: os.setpgid(0, 0)
    except OSError: pass
    os.execvp("sleep", ["sleep", "${m}"])
print("daemonized")' >/dev/null 2>&1 </dev/null; sleep 0.3; echo started`;

/**
 * Leaves a sleeper in the call's group, then SIGKILLs every ancestor that is rune or its helper
 * (found by command line, farthest first: rune, then the helper), so nobody would be left to end
 * the group. Only those: never a process of the test.
 */
const KEEPERS = (m: string) => `${PY} -c 'import os, signal, subprocess, time
subprocess.Popen(["sleep", "${m}"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
keepers, pid = [], os.getppid()
while pid > 1:
    try:
        name = os.path.basename(open("/proc/%d/cmdline" % pid, "rb").read().split(b"\\0")[0])
        parent = int(open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[1])
    except OSError:
        break
    if name.startswith(b"rune"):
        keepers.insert(0, pid)
    pid = parent
killed = []
for keeper in keepers:
    try:
        os.kill(keeper, signal.SIGKILL)
        killed.append(keeper)
    except OSError:
        pass
print("killed", len(killed) or "none", flush=True)
time.sleep(1)'`;

const container = containerProblem();

for (const v of variants()) {
  const skip = v.mode === 'container' && container !== undefined;
  describe.skipIf(skip)(`nothing outlives its call (${v.label})`, () => {
    it('a setsid child: dead when the call ends; control: alive without the sandbox', async () => {
      const m = marker();
      const r = await sandbox(v, 'setsid', SETSID(m));
      expect(r.stdout).toContain('started');
      expect(await survivors(m)).toEqual([]);
      const control = await sandbox(v, 'setsid-control', SETSID(m), ['--sandbox', 'off']);
      expect(control.stdout).toContain('started');
      expect((await survivors(m)).length).toBe(2);
      killAll(m);
    });

    it('a double-forked daemon and a setpgid escape: dead when the call ends; control: alive without the sandbox', async () => {
      const m = marker();
      const r = await sandbox(v, 'daemon', DAEMON(m));
      expect(r.stdout).toContain('started');
      expect(await survivors(m)).toEqual([]);
      const control = await sandbox(v, 'daemon-control', DAEMON(m), ['--sandbox', 'off']);
      expect(control.stdout).toContain('started');
      expect((await survivors(m)).length).toBe(2);
      killAll(m);
    });

    it('rune killed during a call: the call dies with it; control: the same processes live on without the sandbox', async () => {
      for (const off of [false, true]) {
        const m = marker();
        const { work, env } = place(v, off ? 'killed-control' : 'killed');
        let pid = 0;
        const ran = runVariant(v, {
          args: [
            ...(off ? ['--sandbox', 'off'] : []),
            'sandbox',
            '--allow-write',
            work,
            '--',
            '/bin/sh',
            '-c',
            `(sleep ${m} &); sleep ${m} >/dev/null 2>&1 & sleep 30`,
          ],
          cwd: work,
          env,
          started: (p) => {
            pid = p;
          },
        });
        for (let i = 0; i < 100 && processesWith(m).length < 3; i++) await pause(50);
        expect(processesWith(m).length).toBeGreaterThanOrEqual(3);
        process.kill(pid, 'SIGKILL');
        await ran;
        if (off) expect((await survivors(m)).length).toBeGreaterThanOrEqual(2);
        else expect(await survivors(m)).toEqual([]);
        killAll(m);
      }
    });

    it('a call that kills its keepers (rune, then the sandbox helper) to orphan its group: refused, also without Landlock; control: without the sandbox rune dies and the rest lives on', async () => {
      // `rune _seccomp` runs the helper without Landlock (whose signal scoping, Linux 6.12+, would
      // refuse these kills by itself): seccomp alone must hold, as on older kernels.
      for (const how of ['sandbox', 'seccomp only', 'off'] as const) {
        const m = marker();
        const { work, env } = place(v, `keepers-${how.replace(' ', '-')}`);
        const command = ['/bin/sh', '-c', KEEPERS(m)];
        const r = await runVariant(v, {
          args:
            how === 'seccomp only'
              ? ['_seccomp', '--', ...command]
              : [
                  ...(how === 'off' ? ['--sandbox', 'off'] : []),
                  'sandbox',
                  '--allow-write',
                  work,
                  '--',
                  ...command,
                ],
          cwd: work,
          env,
        });
        if (how === 'off') {
          expect(r.signal).toBe('SIGKILL');
          expect((await survivors(m)).length).toBeGreaterThanOrEqual(1);
        } else {
          expect(r.stdout).toMatch(/killed none/);
          expect(await survivors(m)).toEqual([]);
        }
        killAll(m);
      }
    });

    it('a process left by one call cannot race the next file-tool call; control: without the sandbox it does', async () => {
      // The control is an agent run of its own: once per user (without the sandbox the mode
      // changes nothing).
      for (const off of v.mode === 'host' ? [false, true] : [false]) {
        const m = marker();
        const { home, work, env } = place(v, off ? 'race-control' : 'race');
        const outside = ground.dir(`${v.mode}-${v.who}-${off ? 'race-control' : 'race'}/outside`, v.who);
        writeFileSync(join(outside, 'secret.txt'), 'OUTSIDE-SECRET-never-granted\n');
        writeFileSync(join(work, 'note.txt'), 'ORIGINAL-NOTE\n');
        // The repository's own allow-listed script: it starts a racer that acts once the call is
        // over, swapping note.txt for a link to a folder never granted, again and again.
        const racer = `touch started; sleep 0.3; touch raced; i=0; while [ $i -lt 300 ]; do ln -sfn ${outside}/secret.txt note.tmp && mv -f note.tmp note.txt; i=$((i+1)); sleep 0.01; done`;
        writeFileSync(
          join(work, 'race.sh'),
          `#!/bin/sh\nR='${racer}'\n(setsid sh -c "$R" racer-${m} 2>/dev/null || sh -c "$R" racer-${m}) >/dev/null 2>&1 </dev/null &\n` +
            // Returns once the racer runs (after its setsid, where one is allowed).
            `i=0; while [ ! -e started ] && [ $i -lt 200 ]; do sleep 0.01; i=$((i+1)); done\necho racer started\n`,
          { mode: 0o755 },
        );
        for (const file of ['note.txt', 'race.sh']) giveTo(join(work, file), v.who);
        giveTo(join(outside, 'secret.txt'), v.who);
        const runeHome = ground.dir(`${v.mode}-${v.who}-${off ? 'race-control' : 'race'}/home/.rune`, v.who);
        writeFileSync(
          join(runeHome, 'rune.toml'),
          `[policy]\nallowed_commands = ["./race.sh"]\nallowed_paths_rw = ["${work}"]\n`,
        );
        giveTo(join(runeHome, 'rune.toml'), v.who);
        mock.script([
          { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: './race.sh' } }] },
          // The next call waits for the racer to act (1.5 s at most): a living one is swapping by then.
          async () => {
            for (let i = 0; i < 30 && !existsSync(join(work, 'raced')); i++) await pause(50);
            return {
              toolCalls: [
                { name: 'read_file', arguments: { path: 'note.txt' } },
                { name: 'list_dir', arguments: { path: '.' } },
              ],
            };
          },
          { text: 'done' },
        ]);
        const from = mock.requests.length;
        const r = await runVariant(v, {
          args: [
            ...(off ? ['--sandbox', 'off'] : []),
            '--base-url',
            mock.baseUrl,
            '--api-key',
            'sk-test-deputy',
            '--model',
            'm',
            'go',
          ],
          cwd: work,
          env: { ...env, HOME: home },
        });
        expect(r.stdout).toContain('done');
        const tools = toolMessages(from + 2);
        expect(tools[0]?.content).toContain('racer started');
        if (off) {
          // Where nothing contains it the racer lives on and has acted before the next call.
          expect(tools[2]?.content).toContain('raced');
          expect(processesWith(`racer-${m}`).length).toBeGreaterThan(0);
        } else {
          expect(tools[1]?.content).toContain('ORIGINAL-NOTE');
          expect(JSON.stringify(tools)).not.toContain('OUTSIDE-SECRET');
          expect(tools[2]?.content).not.toContain('raced');
          expect(await survivors(`racer-${m}`)).toEqual([]);
        }
        killAll(`racer-${m}`);
      }
    });
  });

  describe.skipIf(skip)(`rune's own command line and environment stay out of a call (${v.label})`, () => {
    // Scans every process it can see as an attacker would. The control markers are planted in its
    // own child and put together at run time, so the scanner's command line holds none of them: a
    // scan that finds nothing proves nothing. Hits are printed reversed, as an attacker would encode
    // them, so rune's redaction of its own key in tool output cannot hide a leak from the test.
    const SCAN = `${PY} -c 'import os, re, subprocess, time
mark = "CONTROL" + "-"
child = subprocess.Popen(["sh", "-c", "sleep 5", mark + "ARGV"], env=dict(os.environ, CONTROL=mark + "ENV"))
time.sleep(0.3)
found = set()
pattern = re.compile(("(sk-deputy-" + "PLANTED-[A-Z]+|" + mark + "[A-Z]+)").encode())
for pid in filter(str.isdigit, os.listdir("/proc")):
    data = {}
    for name in ("cmdline", "environ"):
        try:
            data[name] = open("/proc/%s/%s" % (pid, name), "rb").read()
        except OSError:
            continue
        for hit in pattern.findall(data[name]):
            found.add("%s:%s" % (name, hit.decode()[::-1]))
    # rune itself and its sandbox helper: neither their memory nor their environment opens.
    cmdline = data.get("cmdline", b"")
    if cmdline.startswith(b"rune") or b"rune" + b"-sandbox" in cmdline or b"dist/" + b"rune" in cmdline:
        found.add("seen:%s" % os.path.basename(cmdline.split(b"\\0")[0].decode()).split("-")[0])
        for name in ("mem", "environ"):
            try:
                open("/proc/%s/%s" % (pid, name), "rb").close()
                found.add("%s-open:%s" % (name, cmdline.split(b"\\0")[0].decode()))
            except OSError:
                pass
child.kill()
print(" ".join(sorted(found)))'`;

    it('from inside `rune sandbox`: no key in any cmdline or environ; control: the scan finds its own planted ones', async () => {
      const r = await sandbox(v, 'scan', SCAN, ['--api-key', KEY], { RUNE_API_KEY: ENV_KEY });
      expect(r.stdout).toContain('cmdline:VGRA-LORTNOC');
      expect(r.stdout).toContain('environ:VNE-LORTNOC');
      expect(r.stdout).not.toContain('DETNALP-ytuped-ks');
      expect(r.stdout).not.toMatch(/mem-open|environ-open/);
      // Without a PID namespace it sees rune (and its helper) and tries them; with one, neither exists
      // there (the namespace's init is hidden: hidepid).
      if (v.mode === 'container') expect(r.stdout).toMatch(/seen:rune\b/);
    });

    it("from a tool call of the agent: rune's key is in no process the command can read; control: its own child's are", async () => {
      const { home, work, env } = place(v, 'agent-scan');
      writeFileSync(join(work, 'scan.sh'), `#!/bin/sh\n${SCAN}\n`, { mode: 0o755 });
      giveTo(join(work, 'scan.sh'), v.who);
      const runeHome = ground.dir(`${v.mode}-${v.who}-agent-scan/home/.rune`, v.who);
      writeFileSync(join(runeHome, 'rune.toml'), '[policy]\nallowed_commands = ["./scan.sh"]\n');
      giveTo(join(runeHome, 'rune.toml'), v.who);
      mock.script([
        { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: './scan.sh' } }] },
        { text: 'done' },
      ]);
      const from = mock.requests.length;
      const r = await runVariant(v, {
        args: ['--base-url', mock.baseUrl, '--api-key', KEY, '--model', 'm', 'scan'],
        cwd: work,
        env: { ...env, HOME: home, RUNE_API_KEY: ENV_KEY },
      });
      expect(r.stdout).toContain('done');
      const [tool] = toolMessages(from + 1);
      expect(tool?.content).toContain('cmdline:VGRA-LORTNOC');
      expect(tool?.content).toContain('environ:VNE-LORTNOC');
      expect(tool?.content).not.toContain('DETNALP-ytuped-ks');
      expect(tool?.content).not.toMatch(/mem-open|environ-open/);
      if (v.mode === 'container') expect(tool?.content).toMatch(/seen:rune\b/);
    });

    // Without namespaces rune is not dumpable once it ran a tool: its environment needs
    // CAP_SYS_PTRACE even where no Landlock domain stands between (a process of the same user
    // outside every layer stands in for a tool on a kernel without Landlock).
    it.skipIf(!IS_ROOT || v.who !== 'user' || v.mode !== 'container')(
      "once rune ran a tool, even a process of the same user outside every layer cannot read rune's environment; control: the command's own",
      async () => {
        const m = marker();
        let pid = 0;
        const { work, env } = place(v, 'same-user');
        const ran = runVariant(v, {
          args: ['--api-key', KEY, 'sandbox', '--allow-write', work, '--', '/bin/sh', '-c', `sleep ${m}`],
          cwd: work,
          env: { ...env, RUNE_API_KEY: ENV_KEY, CONTROL: 'CONTROL-ENV' },
          started: (p) => {
            pid = p;
          },
        });
        const isCommand = () => processesWith(`sleep ${m}`, true);
        for (let i = 0; i < 100 && isCommand().length === 0; i++) await pause(50);
        const [command] = isCommand();
        const peek = (target: number | undefined) =>
          spawnSync(
            '/usr/bin/setpriv',
            [
              '--reuid=65534',
              '--regid=65534',
              '--clear-groups',
              '--inh-caps=-all',
              '--',
              '/bin/cat',
              `/proc/${target}/environ`,
            ],
            { encoding: 'utf8' },
          );
        const own = peek(pid);
        const other = peek(command);
        killAll(m);
        await ran;
        expect(own.stdout).not.toContain('sk-deputy-PLANTED');
        expect(own.stderr).toMatch(/Permission denied/);
        expect(other.status).toBe(0);
        expect(other.stdout).toContain('PATH=');
      },
    );
  });
}
