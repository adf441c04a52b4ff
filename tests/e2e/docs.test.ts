// The documentation is executable: every ```sh doc-test line and every ```toml snippet of README.md
// runs against the built binary (a scripted model in place of the provider), the command and flag
// tables are compared with `--help` of every command, and each row of docs/exit-codes.md is provoked.
// The last block shows, on fixtures, that a broken example or an undocumented flag is caught.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SLASH_COMMANDS } from '../../src/cli/session-commands.ts';
import {
  configSnippets,
  exampleProblems,
  exitCodeRows,
  type FencedBlock,
  helpProblems,
  pipelineSnippets,
  runnableExamples,
} from '../helpers/doc-test.ts';
import { useMockLlm } from '../helpers/mock-llm.ts';
import { cleanEnv, requireBinary, run, runRune, tempDir } from '../helpers/rune.ts';

const ROOT = join(import.meta.dirname, '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const EXIT_CODES = readFileSync(join(ROOT, 'docs/exit-codes.md'), 'utf8');
const KEY = 'sk-test-docs-1234567890abcdef';
const mock = useMockLlm();

let bin = '';
beforeAll(() => {
  // `rune` on PATH, as a reader types it.
  bin = tempDir('rune-docs-bin-');
  symlinkSync(requireBinary(), join(bin, 'rune'));
});

/** A fresh home (with a secret to refuse), the scripted model and `rune` on PATH. */
function place() {
  const home = tempDir('rune-docs-home-');
  const runeHome = join(home, '.rune');
  mkdirSync(join(home, '.ssh'), { recursive: true });
  writeFileSync(join(home, '.ssh', 'id_rsa'), 'DOC-TEST-KEY\n');
  const cwd = tempDir('rune-docs-cwd-');
  const env = {
    ...cleanEnv(home),
    PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`,
    RUNE_HOME: runeHome,
    RUNE_API_KEY: KEY,
    RUNE_BASE_URL: mock.baseUrl,
    RUNE_MODEL: 'm',
  };
  return { home, runeHome, cwd, env };
}

function shell(command: string) {
  const p = place();
  return run('/bin/sh', ['-c', command], { cwd: p.cwd, env: p.env, input: '' });
}

const helpOf = async (words: string[]) => (await runRune([...words, '--help'])).stdout;

describe('README.md, run', () => {
  it('has runnable examples, and every one does what its comment says', async () => {
    mock.setFallback({ text: '4' });
    const examples = runnableExamples(README);
    expect(examples.length).toBeGreaterThanOrEqual(5);
    expect(await exampleProblems(examples, shell)).toEqual([]);
  });

  it('every ```toml snippet is a valid rune.toml (rune doctor accepts it)', async () => {
    const snippets = configSnippets(README);
    expect(snippets.length).toBeGreaterThanOrEqual(3);
    for (const snippet of snippets) {
      const p = place();
      mkdirSync(p.runeHome, { recursive: true });
      writeFileSync(join(p.runeHome, 'rune.toml'), snippet.body);
      const result = await runRune(['doctor', '--json'], { cwd: p.cwd, env: p.env });
      const report = JSON.parse(result.stdout);
      expect({ line: snippet.line, problems: report.config.problems ?? [] }).toEqual({
        line: snippet.line,
        problems: [],
      });
    }
  });

  it('the command and flag tables match --help of every command, flag for flag', async () => {
    expect(await helpProblems(README, helpOf)).toEqual([]);
  });

  it("the slash command table is the session's /help, command for command", () => {
    const table = README.slice(README.indexOf('| slash command | |'));
    const rows = table.slice(0, table.indexOf('\n\n')).split('\n').slice(2);
    const documented = rows.flatMap((row) =>
      [...(row.split('|')[1] ?? '').matchAll(/`(\/[a-z]+)/g)].map((m) => m[1]),
    );
    const offered = Object.keys(SLASH_COMMANDS).map((usage) => usage.split(' ')[0]);
    expect(documented.sort()).toEqual(offered.sort());
  });
});

/** A second `rune notes` on a data folder a first one holds (the first stopped afterwards). */
async function secondNotesServer(): Promise<number | null> {
  const p = place();
  const first = spawn(requireBinary(), ['notes', '--port', '0'], {
    env: p.env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      let text = '';
      first.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
        if (text.includes('listening on')) resolve();
      });
      first.on('close', () => reject(new Error(`the first rune notes ended: ${text}`)));
    });
    return (await runRune(['notes', '--port', '0'], { env: p.env })).code;
  } finally {
    first.kill('SIGKILL');
  }
}

interface PipelineDoc {
  resource_types?: { name: string; defaults?: Record<string, unknown> }[];
  resources?: { name: string; type: string; source?: Record<string, unknown> }[];
  jobs?: { name: string; plan: Record<string, unknown>[] }[];
  source?: Record<string, unknown>;
}

/** One Concourse step of the built binary, as Concourse runs it: the step's name, JSON on stdin. */
async function resourceStep(step: 'in' | 'out', input: unknown, folder: string) {
  const dir = tempDir('rune-docs-resource-');
  symlinkSync(requireBinary(), join(dir, step));
  return run(join(dir, step), [folder], { input: JSON.stringify(input), cwd: folder, env: cleanEnv() });
}

/**
 * What a ```yaml doc-test fragment claims that the binary does not do: each rune resource's source
 * (with its type's defaults, `((vars))` filled in) is accepted by `in`; each put to one runs, as a
 * stateless put against the scripted model, in a folder holding the inputs the step lists, and
 * finds its prompt_file and something to read there.
 */
async function pipelineProblems(block: FencedBlock): Promise<string[]> {
  const doc = parse(block.body.replace(/\(\(([\w.-]+)\)\)/g, 'doc-$1')) as PipelineDoc;
  const where = `README line ${block.line}`;
  const runeTypes = new Map((doc.resource_types ?? []).map((type) => [type.name, type.defaults ?? {}]));
  const sources = new Map<string, Record<string, unknown>>();
  if (doc.source) sources.set('source', doc.source);
  for (const resource of doc.resources ?? []) {
    const defaults = runeTypes.get(resource.type);
    if (defaults) sources.set(resource.name, { ...defaults, ...resource.source });
  }
  const problems: string[] = [];
  if (sources.size === 0) problems.push(`${where}: no rune resource in this fragment`);
  for (const [name, source] of sources) {
    const request = { source, version: { ref: 'sha256:0' }, params: { skip_download: true } };
    const result = await resourceStep('in', request, tempDir('rune-docs-in-'));
    if (result.code !== 0) problems.push(`${where}: ${name}: in refused the source: ${result.stderr.trim()}`);
  }
  for (const step of (doc.jobs ?? []).flatMap((job) => job.plan)) {
    const name = String(step.resource ?? step.put ?? '');
    const source = sources.get(name);
    if (step.put === undefined || !source) continue;
    const src = tempDir('rune-docs-put-');
    for (const input of Array.isArray(step.inputs) ? (step.inputs as string[]) : []) {
      mkdirSync(join(src, input), { recursive: true });
      writeFileSync(join(src, input, 'README.md'), '# an input of the doc-test\n');
    }
    const params = (step.params ?? {}) as Record<string, unknown>;
    if (typeof params.prompt_file === 'string') {
      mkdirSync(join(src, params.prompt_file, '..'), { recursive: true });
      writeFileSync(join(src, params.prompt_file), 'A prompt of the doc-test.');
    }
    const { notes: _notes, ...stateless } = source;
    const put = { source: { ...stateless, base_url: mock.baseUrl, api_key: KEY }, params };
    const result = await resourceStep('out', put, src);
    if (result.code !== 0)
      problems.push(`${where}: put ${name} exited ${result.code}: ${result.stderr.trim()}`);
    else if (/is empty: no inputs were mounted/.test(result.stderr))
      problems.push(`${where}: put ${name} mounts no inputs (give the step inputs:)`);
  }
  return problems;
}

describe('README.md, the Concourse examples', () => {
  it('every ```yaml doc-test fragment: its rune sources are accepted, its puts run with their inputs', async () => {
    mock.setFallback({ text: 'Reviewed.' });
    const blocks = pipelineSnippets(README);
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    const problems: string[] = [];
    for (const block of blocks) problems.push(...(await pipelineProblems(block)));
    expect(problems).toEqual([]);
    // The puts really ran: the model was asked, with the input's folder there to read.
    expect(mock.requests.length).toBeGreaterThan(0);
  });

  it('a fragment whose put lists no inputs, or whose source has a typo, is caught (fixture)', async () => {
    mock.setFallback({ text: 'Reviewed.' });
    const broken = [
      'resource_types: [{name: rune, type: registry-image, defaults: {model: m}}]',
      'resources: [{name: review, type: rune, source: {polcy: {}}}, {name: ok, type: rune, source: {}}]',
      'jobs: [{name: j, plan: [{put: ok, params: {prompt: Review repo/.}}]}]',
    ].join('\n');
    const problems = await pipelineProblems({ info: 'yaml doc-test', body: broken, line: 1 });
    expect(problems).toEqual([
      expect.stringMatching(/^README line 1: review: in refused the source: .*unknown key source\.polcy/),
      'README line 1: put ok mounts no inputs (give the step inputs:)',
    ]);
  });
});

/** Runs the binary until `ready`, then sends `signal`: for the codes a signal decides. */
async function signalled(signal: NodeJS.Signals): Promise<number | null> {
  mock.setFallback({ hang: true });
  const before = mock.requests.length;
  const p = place();
  const child = spawn(requireBinary(), ['hang'], { cwd: p.cwd, env: p.env, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.end();
  for (let i = 0; i < 400 && mock.requests.length === before; i++)
    await new Promise((r) => setTimeout(r, 25));
  child.kill(signal);
  return new Promise((resolve) => child.on('close', (code) => resolve(code)));
}

async function code(args: string[], setup: { toml?: string; env?: NodeJS.ProcessEnv } = {}) {
  const p = place();
  if (setup.toml !== undefined) {
    mkdirSync(p.runeHome, { recursive: true });
    writeFileSync(join(p.runeHome, 'rune.toml'), setup.toml);
  }
  const result = await runRune(args, { cwd: p.cwd, env: { ...p.env, ...setup.env }, input: '' });
  return result.code;
}

/**
 * How each row of docs/exit-codes.md is provoked from outside, or why it cannot be: a row without
 * either fails the test, so a new code cannot be documented untested.
 */
const PROVOKE: Record<number, (() => Promise<number | null>) | { cannot: string }> = {
  0: () => code(['--version']),
  1: { cannot: 'INTERNAL is a bug: no input is meant to reach it (errors.test.ts checks its mapping)' },
  2: () => code(['--sandbox', 'foo', 'hi']),
  3: () => code(['hi'], { toml: 'colour = "blue"\n' }),
  4: () => {
    mock.setFallback({ toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] });
    return code(['--max-steps', '1', 'list forever']);
  },
  5: () => {
    mock.setFallback({
      toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }],
      usage: { input: 50, output: 50 },
    });
    return code(['--token-budget', '10', 'list forever']);
  },
  6: () => {
    mock.setFallback({ status: 404, body: {} });
    return code(['hi']);
  },
  7: () => code(['hi'], { env: { RUNE_API_KEY: '', RUNE_BASE_URL: '' } }),
  8: {
    cannot:
      'needs a machine without a layer: tests/e2e/sandbox-strict.test.ts provokes it under a container seccomp profile',
  },
  9: {
    cannot:
      'needs a build without the embedded sandbox helper: the hidden subcommands then refuse (src/sandbox/entry.ts)',
  },
  10: () => {
    mock.setFallback({ hang: true });
    return code(['--timeout', '1', 'hang']);
  },
  11: () =>
    code(['hi'], { toml: '[[mcp]]\nname = "gone"\ncommand = "/nonexistent/server"\nrequired = true\n' }),
  12: () => code(['--system-prompt-file', 'missing.md', 'hi']),
  13: () => code(['--resume', 'last', 'go on']),
  14: () =>
    code(['mcp', 'login', 'http://127.0.0.1:9/mcp'], {
      toml: '[policy]\nallowed_domains = ["127.0.0.1:9"]\n',
    }),
  // Inside the sandbox (its minimal /dev) there is no /dev/fuse, as in a container not given the device.
  15: () =>
    code([
      'sandbox',
      '--allow-read',
      dirname(requireBinary()),
      '--',
      requireBinary(),
      'mount',
      '--foreground',
      '/tmp',
    ]),
  16: () => {
    mock.setFallback({ text: 'and then', finishReason: 'length' });
    return code(['write a long answer']);
  },
  17: () => {
    mock.setFallback({ text: 'I cannot help with that.', finishReason: 'refusal' });
    return code(['something refused']);
  },
  18: secondNotesServer,
  130: () => signalled('SIGINT'),
  143: () => signalled('SIGTERM'),
};

describe('docs/exit-codes.md, row by row', () => {
  const rows = exitCodeRows(EXIT_CODES);

  it('lists the codes the README names, and each has a way to provoke it (or a reason it cannot)', () => {
    expect(rows.length).toBeGreaterThanOrEqual(15);
    const inReadme = [...(README.split('## Exit codes')[1] ?? '').matchAll(/(\d+) [a-zA-Z]/g)].map((m) =>
      Number(m[1]),
    );
    expect(inReadme).toEqual(rows.map((row) => row.code));
    for (const row of rows) expect(PROVOKE[row.code], `no provoker for exit ${row.code}`).toBeDefined();
  });

  for (const row of exitCodeRows(EXIT_CODES)) {
    const provoke = PROVOKE[row.code];
    if (provoke === undefined || 'cannot' in provoke) continue;
    it(`exit ${row.code} (${row.name})`, async () => {
      expect(await provoke()).toBe(row.code);
      mock.setFallback(undefined);
    });
  }
});

describe('the harness catches drift (fixtures)', () => {
  it('a README example that no longer holds fails', async () => {
    const broken = README.replace(
      'rune --max-steps many "hi"                      # → exit 2',
      'rune --max-steps many "hi"                      # → exit 0',
    );
    expect(broken).not.toBe(README);
    const problems = await exampleProblems(
      runnableExamples(broken).filter((e) => e.command.includes('--max-steps')),
      shell,
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/`rune --max-steps many "hi"` exited 2, the README says 0/);
  });

  it('a flag --help shows but the README does not name fails, and so does a documented flag that is gone', async () => {
    const withExtra = async (words: string[]) => {
      const help = await helpOf(words);
      return words.join(' ') === 'doctor'
        ? help.replace('Options:\n', 'Options:\n  --sneaky  an undocumented flag\n')
        : help;
    };
    expect(await helpProblems(README, withExtra)).toEqual([
      'rune doctor --help shows --sneaky, which the README row `rune doctor [--json]` does not name',
    ]);
    const gone = README.replace('`rune sessions [--json]`', '`rune sessions [--json] [--all]`');
    expect(await helpProblems(gone, helpOf)).toEqual([
      'the README row `rune sessions [--json] [--all]` names --all, which rune sessions --help does not know',
    ]);
  });
});
