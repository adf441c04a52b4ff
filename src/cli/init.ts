// `rune init`: first-time set-up that writes a commented rune.toml into $RUNE_HOME (default
// ~/.rune). Interactive on a terminal; `--yes` (or a non-terminal stdin) takes flags and defaults.
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { Writable } from 'node:stream';
import { stringify as tomlString } from 'smol-toml';
import { loadConfig } from '../config/load.ts';
import { templateLines } from '../config/reference.ts';
import { configLayerSchema, PROVIDERS, type ProviderName } from '../config/schema.ts';
import { domainPatternProblem } from '../core/domains.ts';
import { RuneError } from '../core/errors.ts';
import { makeDir } from '../core/make-dir.ts';
import { configFile } from '../core/paths.ts';
import { registerSecret } from '../core/redact.ts';

export interface InitAnswers {
  provider?: ProviderName;
  model?: string;
  baseUrl?: string;
  apiKey?: string;
  policyMode: 'allowlist' | 'confirm';
  allowedCommands: string[];
  allowedDomains: string[];
}

export interface InitOptions {
  yes?: boolean;
  force?: boolean;
  provider?: string;
  model?: string;
  baseUrl?: string;
  apiKey?: string;
  policy?: string;
  allowCommand?: string[];
  allowDomain?: string[];
}

export const DEFAULT_COMMANDS = [
  'ls',
  'cat',
  'head',
  'tail',
  'wc',
  'grep',
  'find',
  'git status',
  'git diff',
  'git log',
];

const quote = (value: string): string => tomlString({ v: value }).slice(4).trim();
const list = (values: readonly string[]): string => `[${values.map(quote).join(', ')}]`;

/** The rune.toml text: every choice made, every other key present as a comment explaining it. */
export function renderConfig(answers: InitAnswers): string {
  const line = (set: boolean, text: string): string => (set ? text : `# ${text}`);
  return `# rune configuration, written by \`rune init\`. Precedence: defaults < this file < RUNE_* variables < flags.
# Every key is checked; an unknown or mistyped key is an error that names this file and the key.

# The model and where it is served. The provider is detected from the key prefix when unset
# (ghu_/ghp_ Copilot, AIza Gemini, sk-or- OpenRouter, sk-ant- Anthropic, other sk- OpenAI).
${line(answers.provider !== undefined, `provider = ${quote(answers.provider ?? 'openai')}`)}
${line(answers.model !== undefined, `model = ${quote(answers.model ?? 'gpt-4o-mini')}`)}
${line(answers.baseUrl !== undefined, `base_url = ${quote(answers.baseUrl ?? 'http://127.0.0.1:11434/v1')}`)}
# The key is better kept in RUNE_API_KEY (or OPENAI_API_KEY, GEMINI_API_KEY, …) than here.
${line(answers.apiKey !== undefined, `api_key = ${quote(answers.apiKey ?? 'sk-...')}`)}

# Every other key, with its default (uncomment to change it) or what it does:
${templateLines('', new Set(['provider', 'model', 'base_url'])).join('\n')}

[policy]
# allowlist: anything no list covers is blocked. confirm: ask before it runs.
mode = ${quote(answers.policyMode)}
# Programs or command prefixes execute_cmd may run without asking.
allowed_commands = ${list(answers.allowedCommands)}
# Hosts fetch_url and tools may reach; "*.example.com" means its subdomains.
allowed_domains = ${list(answers.allowedDomains)}
# The working directory is always readable; paths may start with ~.
${templateLines('policy', new Set(['mode', 'allowed_commands', 'allowed_domains'])).join('\n')}

[sandbox]
${templateLines('sandbox').join('\n')}

[checkpoints]
${templateLines('checkpoints').join('\n')}

# A stdio MCP server:
# [[mcp]]
# name = "files"
# command = "npx"
# args = ["@modelcontextprotocol/server-filesystem", "/tmp"]
`;
}

function splitList(text: string): string[] {
  return text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
}

function fromOptions(options: InitOptions): InitAnswers {
  if (options.provider !== undefined && !(PROVIDERS as readonly string[]).includes(options.provider)) {
    throw new RuneError('USAGE', `--provider must be one of ${PROVIDERS.join(', ')}`);
  }
  if (options.policy !== undefined && options.policy !== 'allowlist' && options.policy !== 'confirm') {
    throw new RuneError('USAGE', '--policy must be allowlist or confirm');
  }
  const answers: InitAnswers = {
    policyMode: (options.policy as InitAnswers['policyMode'] | undefined) ?? 'allowlist',
    allowedCommands: options.allowCommand ?? DEFAULT_COMMANDS,
    allowedDomains: options.allowDomain ?? [],
  };
  if (options.provider) answers.provider = options.provider as ProviderName;
  if (options.model) answers.model = options.model;
  if (options.baseUrl) answers.baseUrl = options.baseUrl;
  if (options.apiKey) answers.apiKey = options.apiKey;
  return answers;
}

async function interview(
  defaults: InitAnswers,
  io: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream },
): Promise<InitAnswers> {
  let muted = false;
  // readline echoes through this stream; while muted only the end of the line gets through.
  const output = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      if (!muted) io.output.write(chunk);
      else if (/[\r\n]/.test(chunk.toString())) io.output.write('\n');
      done();
    },
  });
  const rl = createInterface({ input: io.input, output, terminal: true });
  try {
    const ask = async (question: string, fallback = ''): Promise<string> => {
      const answer = (await rl.question(fallback ? `${question} [${fallback}]: ` : `${question}: `)).trim();
      return answer || fallback;
    };
    io.output.write('Set up rune. Press Enter to keep the value in brackets; leave optional values empty.\n');
    let provider: string;
    for (;;) {
      provider = await ask(
        `Provider (${PROVIDERS.join(', ')}; empty: detect from the key)`,
        defaults.provider ?? '',
      );
      if (!provider || (PROVIDERS as readonly string[]).includes(provider)) break;
      io.output.write(`  "${provider}" is not one of ${PROVIDERS.join(', ')}\n`);
    }
    const model = await ask('Model', defaults.model ?? '');
    let baseUrl: string;
    for (;;) {
      baseUrl = await ask('Base URL (empty: the provider default)', defaults.baseUrl ?? '');
      const checked = baseUrl ? configLayerSchema().shape.base_url.safeParse(baseUrl) : undefined;
      if (!checked?.error) break;
      io.output.write(`  ${checked.error.issues[0]?.message ?? 'not a URL'}\n`);
    }
    io.output.write(
      'API key: better set RUNE_API_KEY in your shell; a key typed here is stored in rune.toml.\n',
    );
    // Typed without echo: a key on screen ends up in scrollback and terminal recordings.
    io.output.write('API key (empty: use RUNE_API_KEY): ');
    muted = true;
    let apiKey: string;
    try {
      apiKey = (await rl.question('')).trim();
    } finally {
      muted = false;
    }
    registerSecret(apiKey);
    let policyMode: string;
    for (;;) {
      policyMode = await ask('Policy mode (allowlist or confirm)', defaults.policyMode);
      if (policyMode === 'allowlist' || policyMode === 'confirm') break;
      io.output.write('  please answer allowlist or confirm\n');
    }
    const commands = await ask(
      'Commands allowed without asking (comma-separated)',
      defaults.allowedCommands.join(', '),
    );
    let domains: string;
    for (;;) {
      domains = await ask(
        'Domains fetch_url may reach (comma-separated)',
        defaults.allowedDomains.join(', '),
      );
      const problems = splitList(domains).flatMap((domain) => domainPatternProblem(domain) ?? []);
      if (problems.length === 0) break;
      io.output.write(`  ${problems.join('; ')}\n`);
    }
    const answers: InitAnswers = {
      policyMode: policyMode as InitAnswers['policyMode'],
      allowedCommands: splitList(commands),
      allowedDomains: splitList(domains),
    };
    if (provider) answers.provider = provider as ProviderName;
    if (model) answers.model = model;
    if (baseUrl) answers.baseUrl = baseUrl;
    if (apiKey) answers.apiKey = apiKey;
    return answers;
  } finally {
    rl.close();
  }
}

/** Ctrl-C during the questions ends with 130 like everywhere else, and nothing written. */
async function interviewOrInterrupt(
  defaults: InitAnswers,
  io: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream },
): Promise<InitAnswers> {
  try {
    return await interview(defaults, io);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ABORT_ERR') {
      io.output.write('\n');
      throw new RuneError('INTERRUPTED', 'rune init interrupted; nothing was written');
    }
    throw error;
  }
}

/** Writes the file (0600, folder 0700) after checking it loads with the one schema. */
export function writeConfigFile(file: string, text: string, force: boolean): void {
  if (existsSync(file) && !force) {
    throw new RuneError('USAGE', `${file} already exists; pass --force to replace it`);
  }
  // What init writes must load: a value the schema rejects is reported now, not at the next run.
  loadConfig({ env: {}, file, readFile: () => text });
  try {
    makeDir(dirname(file));
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, text, { mode: 0o600 });
    renameSync(tmp, file);
  } catch (error) {
    throw new RuneError('IO', `cannot write ${file}: ${(error as Error).message}`, { cause: error });
  }
}

export async function initCommand(
  options: InitOptions,
  io: { input: NodeJS.ReadableStream & { isTTY?: boolean }; output: NodeJS.WritableStream } = {
    input: process.stdin,
    output: process.stderr,
  },
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  registerSecret(options.apiKey);
  const file = configFile(env);
  if (existsSync(file) && !options.force) {
    throw new RuneError('USAGE', `${file} already exists; pass --force to replace it`);
  }
  const defaults = fromOptions(options);
  const interactive = !options.yes && Boolean(io.input.isTTY);
  const answers = interactive ? await interviewOrInterrupt(defaults, io) : defaults;
  writeConfigFile(file, renderConfig(answers), options.force ?? false);
  io.output.write(`wrote ${file}\n`);
  if (!answers.apiKey) io.output.write('set RUNE_API_KEY (or pass --api-key) before the first run\n');
  return 0;
}
