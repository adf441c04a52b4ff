// The resource as operators really deploy it: the Dockerfile's image (a Debian 12 minbase root
// built by mmdebstrap from the Dockerfile's own instructions), started as its USER (root, with a
// container's default capabilities), Concourse's variables and no TTY, with the step's volumes in
// both layouts: root-owned 0700 (the standard resource-test layout) and owned by the image's user
// `rune` — plainly, inside a user namespace mapping a range of ids, and under the seccomp profile a
// container runtime gives unprivileged containers.
// Only the model is mocked. The image root is cached in tests/e2e/.concourse-image/ (gitignored),
// keyed by the Dockerfile's runtime stage, so CI builds it once and a local re-run is fast.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  buildImage,
  type Confinement,
  type ContainerRun,
  type Image,
  imagePrerequisites,
  runInImage,
} from '../helpers/concourse-image.ts';
import { GC_PRELOAD } from '../helpers/gc.ts';
import { useMockLlm } from '../helpers/mock-llm.ts';
import { logIn, mintToken, type NotesProcess, startNotesProcess } from '../helpers/notes.ts';
import { type RunResult, requireBinary, tempDir } from '../helpers/rune.ts';
import { type SilentServer, startSilentServer } from '../helpers/silent-server.ts';
import { BUILD_ENV } from './concourse-harness.ts';

const KEY = 'sk-proj-imageSecretKey0123456789abcdefgh';
// Building the image needs root, mmdebstrap and bwrap (.ci/run installs them); when one is missing
// the suite is skipped with the reason in its name.
const prerequisites = imagePrerequisites();
const CONFINEMENTS: Confinement[] = ['plain', 'userns', 'seccomp'];
/** Where the GC preload is bound inside the container. */
const GC_INSIDE = '/tmp/.gc-preload.cjs';

interface Pipeline {
  resource_types: { name: string; defaults?: Record<string, unknown> }[];
  resources: { name: string; type: string; source: Record<string, unknown> }[];
  jobs: { name: string; plan: Record<string, unknown>[] }[];
}

/** The example pipeline's pieces, with its credential variable filled in and the mock as provider. */
function examplePipeline(baseUrl: string) {
  const text = readFileSync(join(import.meta.dirname, '../../examples/pipeline.yml'), 'utf8');
  const pipeline = parse(text.replaceAll('((openai_api_key))', KEY)) as Pipeline;
  const resource = (name: string) => {
    const found = pipeline.resources.find((r) => r.name === name);
    if (!found) throw new Error(`examples/pipeline.yml has no resource ${name}`);
    // As Concourse does: the resource type's defaults under the resource's own source.
    const defaults = pipeline.resource_types.find((t) => t.name === found.type)?.defaults ?? {};
    return { ...defaults, ...found.source, base_url: baseUrl };
  };
  const put = pipeline.jobs
    .find((job) => job.name === 'review-commit')
    ?.plan.find((step) => step.put === 'review') as { params: Record<string, unknown> } | undefined;
  if (!put) throw new Error('examples/pipeline.yml: the review-commit job has no put to review');
  return { check: resource('release-notes-check'), review: resource('review'), reviewParams: put.params };
}

/** The commands the example's review prompt tells the agent to run (in backquotes). */
function promptCommands(prompt: string): string[] {
  return [...prompt.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
}

describe.skipIf(!prerequisites.ok)(
  `the resource image under bubblewrap${prerequisites.ok ? '' : ` (skipped: ${prerequisites.reason})`}`,
  () => {
    const mock = useMockLlm();
    let image: Image;
    let binary: string;

    beforeAll(() => {
      binary = requireBinary();
      image = buildImage((line) => process.stderr.write(`concourse-image: ${line}\n`));
    }, 1_200_000);

    /** A Concourse build: /tmp/build/<id>/ with the step's folders, owned by root as volumes are. */
    function build(): { host: string; id: string; dir: string } {
      const host = tempDir('rune-build-');
      chmodSync(host, 0o755);
      const id = Math.random().toString(16).slice(2, 10);
      mkdirSync(join(host, id), { mode: 0o755 });
      return { host, id, dir: `/tmp/build/${id}` };
    }

    /** The image's unprivileged user, who owns HOME (check runs as it). */
    const rune = () => image.accounts.rune!;

    /** A step's volume in /tmp/build/<id>/, mode 0700, owned by root or by `rune`. */
    function volume(b: { host: string; id: string; dir: string }, name: string, owner: 'root' | 'rune') {
      const host = join(b.host, b.id, name);
      mkdirSync(host, { mode: 0o700 });
      chmodSync(host, 0o700);
      if (owner === 'rune') chownSync(host, rune().uid, rune().gid);
      return { host, inside: `${b.dir}/${name}` };
    }

    function home(owner = rune().uid): string {
      const dir = tempDir('rune-image-home-');
      chownSync(dir, owner, rune().gid);
      chmodSync(dir, 0o755);
      return dir;
    }

    /** A root-owned git repository with one commit, as the git resource leaves it. */
    function repository(at: string, owner?: { uid: number; gid: number }): void {
      mkdirSync(at, { recursive: true });
      writeFileSync(join(at, 'README.md'), '# demo\n\nA tiny project.\n');
      const git = (...args: string[]) =>
        execFileSync('git', ['-c', 'init.defaultBranch=main', ...args], {
          cwd: at,
          env: {
            PATH: process.env.PATH,
            GIT_AUTHOR_NAME: 'Ada',
            GIT_AUTHOR_EMAIL: 'ada@example.com',
            GIT_COMMITTER_NAME: 'Ada',
            GIT_COMMITTER_EMAIL: 'ada@example.com',
            GIT_CONFIG_GLOBAL: '/dev/null',
            GIT_CONFIG_NOSYSTEM: '1',
          },
        });
      git('init', '-q');
      git('add', 'README.md');
      git('commit', '-q', '-m', 'Add the README of the demo');
      if (owner) execFileSync('chown', ['-R', `${owner.uid}:${owner.gid}`, at]);
    }

    function step(
      confinement: Confinement,
      name: 'check' | 'in' | 'out',
      input: unknown,
      options: { build: { host: string }; folder?: string; home: string } & Pick<
        Partial<ContainerRun>,
        'env' | 'homeReadOnly' | 'tmpNotWritable' | 'files'
      >,
    ): Promise<RunResult> {
      return runInImage(image, binary, {
        confinement,
        argv: [`/opt/resource/${name}`, ...(options.folder ? [options.folder] : [])],
        input: JSON.stringify(input),
        build: options.build.host,
        home: options.home,
        cwd: name === 'out' && options.folder ? options.folder : image.workdir,
        env: { ...BUILD_ENV, ...options.env },
        ...(options.homeReadOnly ? { homeReadOnly: true } : {}),
        ...(options.tmpNotWritable ? { tmpNotWritable: true } : {}),
        ...(options.files ? { files: options.files } : {}),
      });
    }

    /** Exactly one JSON value on stdout, the layer summary once on stderr, the key nowhere. */
    function protocol(result: RunResult): unknown {
      if (result.code !== 0) {
        throw new Error(
          `step failed with ${result.code}:\nstderr: ${result.stderr}\nstdout: ${result.stdout}`,
        );
      }
      expect(result.stdout.endsWith('\n')).toBe(true);
      expect(result.stdout.trim().split('\n')).toHaveLength(1);
      expect(result.stderr.match(/sandbox layers in force:/g)).toHaveLength(1);
      expect(result.stderr).toMatch(/sandbox layer SKIPPED: cgroups: \S/);
      expect(result.stderr).not.toContain(KEY);
      return JSON.parse(result.stdout);
    }

    it("is built from the Dockerfile's own runtime stage: its packages, user, binary and git trust", () => {
      expect(image.packages).toEqual(expect.arrayContaining(['ca-certificates', 'git']));
      // Started as root (every volume layout works); `rune` owns HOME, and check runs as it.
      expect(image).toMatchObject({ uid: 0, user: 'root', binary: { dest: '/opt/resource/rune' } });
      expect(image.accounts.rune).toEqual({ uid: 10001, gid: 10001 });
      expect(image.env.HOME).toBe('/home/rune');
      expect(existsSync(join(image.root, 'usr/bin/git'))).toBe(true);
      expect(readFileSync(join(image.root, 'etc/gitconfig'), 'utf8')).toMatch(/directory = \*/);
      for (const name of ['check', 'in', 'out']) {
        expect(execFileSync('readlink', [join(image.root, 'opt/resource', name)], { encoding: 'utf8' })).toBe(
          'rune\n',
        );
      }
    });

    for (const confinement of CONFINEMENTS) {
      describe(confinement, () => {
        it("check → in → out on root-owned 0700 volumes: the example pipeline's review job runs its tool calls", async () => {
          const example = examplePipeline(mock.baseUrl);
          const b = build();
          const h = home();

          mock.script([{ text: '20.20.0' }]);
          const checked = await step(
            confinement,
            'check',
            { source: example.check, version: null },
            { build: b, home: h },
          );
          const versions = protocol(checked);
          expect(versions).toEqual([{ ref: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) }]);
          // Started as root, check becomes rune, the owner of HOME.
          expect(checked.stderr).toContain('rune: running as uid 10001, the owner of /home/rune');
          const version = (versions as Record<string, string>[])[0]!;

          // The standard resource-test layout: the destination is root's, mode 0700; in stays root.
          const get = volume(b, 'get', 'root');
          mock.script([{ text: '20.20.0' }]);
          const fetched = await step(
            confinement,
            'in',
            { source: example.check, version },
            { build: b, home: h, folder: get.inside },
          );
          const got = protocol(fetched) as { version: unknown; metadata: { name: string; value: string }[] };
          expect(fetched.stderr).not.toContain('running as uid');
          expect(got.version).toEqual(version);
          expect(got.metadata).toContainEqual({ name: 'ref', value: version.ref });
          expect(got.metadata).toContainEqual({ name: 'answer', value: '20.20.0' });
          expect(got.metadata).toContainEqual({
            name: 'build_url',
            value: 'https://ci.example.com/teams/main/pipelines/rune-e2e/jobs/ask/builds/17',
          });
          expect(readFileSync(join(get.host, 'response.txt'), 'utf8')).toBe('20.20.0');

          // out: the put folder (0700) and its input are root's; the agent runs what the prompt says.
          const put = volume(b, 'put', 'root');
          repository(join(put.host, 'repo'));
          const prompt = String(example.reviewParams.prompt);
          const commands = [
            ...promptCommands(prompt),
            'cd repo && git log --oneline',
            'ls repo',
            'cat repo/README.md',
          ];
          expect(commands.length).toBeGreaterThan(3);
          mock.script([
            { toolCalls: commands.map((cmd) => ({ name: 'execute_cmd', arguments: { cmd } })) },
            { text: 'The commit adds a README. Looks fine.' },
          ]);
          const out = await step(
            confinement,
            'out',
            { source: example.review, params: example.reviewParams },
            { build: b, home: h, folder: put.inside },
          );
          const emitted = protocol(out) as {
            version: Record<string, string>;
            metadata: { name: string; value: string }[];
          };
          expect(emitted.metadata).toContainEqual({ name: 'tool_calls', value: String(commands.length) });
          expect(emitted.metadata).toContainEqual({
            name: 'answer',
            value: 'The commit adds a README. Looks fine.',
          });
          expect(out.stderr).toContain('The commit adds a README. Looks fine.');
          expect(out.stderr).not.toContain('is empty');
          const results = mock.requests
            .at(-1)!
            .body.messages.filter((message: { role: string }) => message.role === 'tool')
            .map((message: { content: string }) => message.content as string);
          expect(results).toHaveLength(commands.length);
          for (const [index, result] of results.entries()) {
            expect(result, commands[index]).toMatch(/^exit code: 0\n/);
            expect(result).not.toMatch(/dubious ownership|blocked by policy/);
            // No cgroup is writable in the container: the model is told which layers were missing.
            expect(result).toMatch(/\[sandbox: this ran without the .*cgroups/);
          }
          expect(results[0]).toContain('Add the README of the demo');
          expect(results[0]).toContain('+A tiny project.');
          expect(results.join('\n')).toContain('README.md');
          if (confinement === 'seccomp') {
            // The true cause, not a sysctl: the runtime's filter refuses unshare.
            expect(out.stderr).toMatch(
              /SKIPPED: namespaces: .*seccomp filter stacked on rune refuses unshare/,
            );
            expect(out.stderr).not.toMatch(/unprivileged_userns_clone is/);
            expect(results[0]).toMatch(/\[sandbox: this ran without the .*namespaces/);
          }
        });

        it('in and out on volumes owned by the image user (0700) run as that user', async () => {
          const example = examplePipeline(mock.baseUrl);
          const b = build();
          const h = home();
          const answer = 'Owned by rune.';
          const version = { ref: `sha256:${createHash('sha256').update(answer).digest('hex')}` };
          const get = volume(b, 'get', 'rune');
          mock.script([{ text: answer }]);
          const fetched = await step(
            confinement,
            'in',
            { source: example.check, version },
            { build: b, home: h, folder: get.inside },
          );
          protocol(fetched);
          expect(fetched.stderr).toContain(`rune: running as uid 10001, the owner of ${get.inside}`);
          expect(statSync(join(get.host, 'response.txt')).uid).toBe(10001);

          const put = volume(b, 'put', 'rune');
          repository(join(put.host, 'repo'), rune());
          mock.script([
            { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'git -C repo log --oneline' } }] },
            { text: 'Reviewed.' },
          ]);
          const out = await step(
            confinement,
            'out',
            { source: example.review, params: example.reviewParams },
            { build: b, home: h, folder: put.inside },
          );
          protocol(out);
          expect(out.stderr).toContain(`rune: running as uid 10001, the owner of ${put.inside}`);
          const tool = mock.requests
            .at(-1)!
            .body.messages.find((message: { role: string }) => message.role === 'tool');
          expect(tool.content).toMatch(/^exit code: 0\n/);
          expect(tool.content).toContain('Add the README of the demo');
        });

        it('strict mode fails every step with exit 8 before any model call, naming each missing layer', async () => {
          const example = examplePipeline(mock.baseUrl);
          const strict = { ...example.review, prompt: 'Anything.', sandbox: { mode: 'strict' } };
          const b = build();
          const h = home();
          mkdirSync(join(b.host, b.id, 'put', 'repo'), { recursive: true });
          volume(b, 'get', 'root');
          for (const [name, input, folder] of [
            ['check', { source: strict }, undefined],
            ['in', { source: strict, version: { ref: 'sha256:0' } }, `${b.dir}/get`],
            ['out', { source: strict, params: { prompt: 'Review.' } }, `${b.dir}/put`],
          ] as const) {
            const result = await step(confinement, name, input, {
              build: b,
              home: h,
              ...(folder ? { folder } : {}),
            });
            expect(result.code, `${name}: ${result.stderr}`).toBe(8);
            expect(result.stdout).toBe('');
            expect(result.stderr).toContain('source.sandbox.mode is strict, but');
            expect(result.stderr).toMatch(/\n {2}cgroups: \S/);
            if (confinement === 'seccomp') {
              expect(result.stderr).toMatch(
                /\n {2}namespaces: .*seccomp filter stacked on rune refuses unshare/,
              );
            }
            expect(result.stderr).not.toContain(KEY);
          }
          expect(mock.requests).toHaveLength(0);
        });
      });
    }

    // Under the runtime's seccomp profile, as Docker runs the image; the volume layouts and the
    // owner switch run under every confinement above.
    describe('what a Concourse user expects, in the image', () => {
      let notes: NotesProcess;
      let token: string;
      let silent: SilentServer;
      beforeAll(async () => {
        const notesHome = tempDir('rune-image-notes-');
        writeFileSync(join(notesHome, 'rune.toml'), '[notes.local]\nadmins = ["ada:ada-password-1"]\n');
        notes = await startNotesProcess({ home: notesHome });
        token = await mintToken(notes.url, await logIn(notes.url, 'ada', 'ada-password-1'), 'ci', 'admin');
        silent = await startSilentServer();
      }, 60_000);
      afterAll(async () => {
        await notes?.stop();
        await silent?.close();
      });

      for (const confinement of ['seccomp'] as const) {
        it(`${confinement}: deadlines under GC, gets that fetch, nothing yet is [], open requests, config first, empty puts, retried puts`, async () => {
          const example = examplePipeline(mock.baseUrl);
          const b = build();
          const h = home();
          const sha = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;

          // A notes server that accepts and never answers, with the collector running all along.
          const gc = {
            env: { NODE_OPTIONS: `--expose-gc --require ${GC_INSIDE}` },
            files: [{ host: GC_PRELOAD, inside: GC_INSIDE }],
          };
          const hung = await step(
            confinement,
            'check',
            {
              source: { notes: { url: silent.url, token: 'rune_x_0123456789', note: 'n', timeout_secs: 1 } },
            },
            { build: b, home: h, ...gc },
          );
          expect(hung.code, hung.stderr).toBe(12);
          expect(hung.stderr).toContain(
            `notes server ${silent.url} did not answer GET /api/notes/n within 1 s`,
          );

          // Stateless in is a fetch: the same bytes twice, and exit 13 once the answer changed.
          const source = example.check;
          const version = { ref: sha('20.20.0') };
          const dests = ['get-1', 'get-2', 'get-3'].map((name) => volume(b, name, 'root'));
          mock.script([{ text: '20.20.0' }, { text: '20.20.0' }, { text: '20.21.0' }]);

          for (const dest of dests.slice(0, 2)) {
            protocol(
              await step(confinement, 'in', { source, version }, { build: b, home: h, folder: dest.inside }),
            );
          }
          for (const file of ['response.txt', 'payload.json']) {
            expect(readFileSync(join(dests[1]!.host, file))).toEqual(
              readFileSync(join(dests[0]!.host, file)),
            );
          }
          const changed = await step(
            confinement,
            'in',
            { source, version },
            { build: b, home: h, folder: dests[2]!.inside },
          );
          expect(changed.code).toBe(13);
          expect(changed.stdout).toBe('');
          expect(readdirSync(dests[2]!.host)).toEqual([]);

          // A put-only resource and a note or watched file not made yet: [] (and a key Concourse
          // may add beside source is ignored).
          const putOnly = await step(
            confinement,
            'check',
            { source: example.review, space: 'x' },
            { build: b, home: h },
          );
          expect(JSON.parse(putOnly.stdout)).toEqual([]);
          const note = `later-${confinement}`;
          const watch = { notes: { url: notes.url, token, note, watch: 'prompt.md' } };
          expect(
            JSON.parse((await step(confinement, 'check', { source: watch }, { build: b, home: h })).stdout),
          ).toEqual([]);

          // The configuration first: a missing key is the only line, before any sandbox summary.
          const { api_key: _key, base_url: _url, ...keyless } = example.check as Record<string, unknown>;
          const noKey = await step(confinement, 'check', { source: keyless }, { build: b, home: h });
          expect(noKey.code).toBe(7);
          expect(noKey.stderr).not.toContain('sandbox layers');

          // An empty put folder is said to be one.
          const empty = volume(b, 'put-empty', 'root');
          const emptyPut = await step(
            confinement,
            'out',
            { source: keyless, params: example.reviewParams },
            { build: b, home: h, folder: empty.inside },
          );
          expect(emptyPut.stderr).toContain(`the put folder ${empty.inside} is empty`);

          // A retried put of the same build emits the run it stored, without a second model run.
          const store = { ...example.review, notes: { url: notes.url, token, note: `runs-${confinement}` } };
          const outs: RunResult[] = [];
          const modelCalls = mock.requests.length;
          mock.script([{ text: 'Stored once.' }]);
          for (const name of ['put-1', 'put-2']) {
            const put = volume(b, name, 'root');
            repository(join(put.host, 'repo'));
            const params = { source: store, params: example.reviewParams };
            outs.push(await step(confinement, 'out', params, { build: b, home: h, folder: put.inside }));
          }
          const [first, retried] = outs.map((out) => {
            expect(out.code, out.stderr).toBe(0);
            return JSON.parse(out.stdout) as { version: unknown };
          });
          expect(retried!.version).toEqual(first!.version);
          expect(outs[1]!.stderr).toContain('this put already stored');
          expect(mock.requests).toHaveLength(modelCalls + 1);
        });
      }
    });

    describe('preconditions, checked before the first model call', () => {
      it('a temporary folder that is not writable fails with exit 12, naming it', async () => {
        const { check } = examplePipeline(mock.baseUrl);
        const result = await step(
          'plain',
          'check',
          { source: check },
          {
            build: build(),
            home: home(),
            tmpNotWritable: true,
          },
        );
        expect(result.code).toBe(12);
        expect(result.stdout).toBe('');
        expect(result.stderr).toContain('check: the temporary folder /tmp is not writable: EACCES');
        expect(result.stderr).toContain('set TMPDIR');
        expect(mock.requests).toHaveLength(0);
      });

      it("out: an input the agent's tools cannot read fails with exit 12, naming it and why", async () => {
        // The put folder is root's, so the step stays root; an input of another uid with mode 0700
        // passes root's access(), but the tools, which hold no capability, could not read it.
        const { review, reviewParams } = examplePipeline(mock.baseUrl);
        const b = build();
        const put = volume(b, 'put', 'root');
        mkdirSync(join(put.host, 'secret-input'), { mode: 0o700 });
        chownSync(join(put.host, 'secret-input'), 4242, 4242);
        const result = await step(
          'plain',
          'out',
          { source: review, params: reviewParams },
          { build: b, home: home(), folder: put.inside },
        );
        expect(result.code).toBe(12);
        expect(result.stderr).toContain(
          `out: the input secret-input ${put.inside}/secret-input is not readable by the agent's tools, which run as root without capabilities (owned by uid 4242, mode 0700; this step runs as uid 0)`,
        );
        expect(mock.requests).toHaveLength(0);
      });

      it('a read-only HOME still runs the step; what cannot be kept there is said to be EROFS', async () => {
        const { review } = examplePipeline(mock.baseUrl);
        const b = build();
        repository(join(b.host, b.id, 'put', 'repo'));
        mock.script([
          { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'ls repo' } }] },
          { text: 'Listed.' },
        ]);
        const result = await step(
          'plain',
          'out',
          { source: review, params: { prompt: 'List repo.' } },
          {
            build: b,
            home: home(),
            homeReadOnly: true,
            folder: `${b.dir}/put`,
          },
        );
        protocol(result);
        expect(result.stderr).toContain('EROFS');
        expect(result.stderr).not.toMatch(/ENOENT[^\n]*\.rune/);
      });
    });
  },
);
