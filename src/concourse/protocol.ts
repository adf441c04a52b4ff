// The three steps as functions of (arguments, stdin text) → the one JSON value for stdout. No
// process-level I/O here beyond the files the steps own, so the rules are tested without a binary.
import { realpathSync } from 'node:fs';
import { basename } from 'node:path';
import { credentialsInArgs, credentialsInTable, credentialsInTableUrl } from '../core/command-credentials.ts';
import { RuneError } from '../core/errors.ts';
import { Root } from '../core/fd/index.ts';
import { registerSecret } from '../core/redact.ts';
import { readInside } from './files.ts';
import { inputFolders, resolveInside } from './paths.ts';
import { requireReadableFolder } from './preflight.ts';
import { type OutParams, parseRequest, type Source, type Step, type Version } from './schema.ts';
import type { OutPrompt, StepOutput } from './step-types.ts';

export type { Metadata, OutPrompt, StepOutput } from './step-types.ts';

import type { StatelessDeps } from './stateless.ts';
import * as stateless from './stateless.ts';
import type { StoreDeps } from './store.ts';
import * as store from './store.ts';

export type StepDeps = StatelessDeps & StoreDeps;

export function isStep(name: string): name is Step {
  return name === 'check' || name === 'in' || name === 'out';
}

export async function runStep(
  step: Step,
  args: readonly string[],
  stdin: string,
  deps: StepDeps,
): Promise<Version[] | StepOutput> {
  registerSecretsOf(stdin);
  switch (step) {
    case 'check': {
      const request = parseRequest('check', stdin);
      const source = requireSource('check', request.source);
      if (source.notes) return store.check(deps, source, source.notes, request.version);
      return stateless.check(deps, source, request.version);
    }
    case 'in': {
      const request = parseRequest('in', stdin);
      const dest = requireFolderArg('in', args, 'destination');
      const source = requireSource('in', request.source);
      if (!request.version)
        throw new RuneError('USAGE', 'in: no version given; Concourse passes the one to fetch');
      if (source.notes) return store.get(deps, source.notes, request.version, request.params, dest);
      return stateless.get(deps, source, request.version, request.params, dest);
    }
    case 'out': {
      const request = parseRequest('out', stdin);
      const src = requireFolderArg('out', args, 'source');
      const source = requireSource('out', request.source);
      const run = outPrompt(src, request.params);
      warnIfEmpty(run.cwd, deps.log);
      if (source.notes) return store.put(deps, source, source.notes, run);
      return stateless.put(deps, source, run);
    }
  }
}

/** Registered before validation: a rejected source must not leak its key through a later message. */
function registerSecretsOf(stdin: string): void {
  let raw: unknown;
  try {
    raw = JSON.parse(stdin);
  } catch {
    return;
  }
  const source = (raw as { source?: unknown } | null)?.source;
  if (typeof source !== 'object' || source === null) return;
  const { api_key, base_url, notes, mcp } = source as {
    api_key?: unknown;
    base_url?: unknown;
    notes?: { token?: unknown; url?: unknown };
    mcp?: unknown;
  };
  if (typeof api_key === 'string') registerSecret(api_key);
  registerUrlSecrets(base_url);
  if (typeof notes === 'object' && notes !== null) {
    if (typeof notes.token === 'string') registerSecret(notes.token);
    registerUrlSecrets(notes.url);
  }
  // An MCP token, header values (an API key) and env values of a stdio server (GH_TOKEN=…, which
  // the server may echo on stderr when it fails to start) may be credentials. The pipeline's
  // `((var))` may stand under any name, so a key-shaped value counts whatever its name; a plain
  // word or number (`NODE_ENV: production`) does not (docs/adr/0004-concourse-resource.md).
  for (const server of Array.isArray(mcp) ? mcp : []) {
    const { bearer_token, headers, env, args } = (server ?? {}) as {
      bearer_token?: unknown;
      headers?: unknown;
      env?: unknown;
      args?: unknown;
    };
    // `--api-key=…`, `TOKEN=…`, `Authorization: Bearer …` in the server's command line.
    if (Array.isArray(args)) {
      const words = args.filter((arg): arg is string => typeof arg === 'string');
      for (const value of credentialsInArgs(words)) registerSecret(value);
    }
    if (typeof bearer_token === 'string') registerSecret(bearer_token);
    registerUrlSecrets((server as { url?: unknown } | null)?.url);
    for (const [table, kind] of [
      [headers, 'headers'],
      [env, 'env'],
    ] as const) {
      if (typeof table !== 'object' || table === null) continue;
      const strings = Object.fromEntries(
        Object.entries(table).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
      );
      for (const value of credentialsInTable(strings, kind)) registerSecret(value);
    }
  }
}

/** A URL's password (and its Basic token) and credential or key-shaped query values (`?key=…`). */
function registerUrlSecrets(url: unknown): void {
  if (typeof url !== 'string') return;
  for (const value of credentialsInTableUrl(url)) registerSecret(value);
}

function requireSource(step: Step, source: Source | null): Source {
  if (source) return source;
  throw new RuneError(
    'USAGE',
    `${step}: source is null; set source.prompt (stateless) or source.notes (a notes store) in the resource`,
  );
}

function requireFolderArg(step: Step, args: readonly string[], what: string): string {
  const folder = args[0];
  if (!folder)
    throw new RuneError('USAGE', `${step}: missing the ${what} folder argument (${step} <folder>)`);
  return folder;
}

/**
 * With `inputs: detect` (Concourse's default for a put) only the inputs named in params are
 * mounted: a repository named in the prompt's prose is not, and the agent would review nothing.
 */
function warnIfEmpty(cwd: string, log: (line: string) => void): void {
  const folder = Root.open(cwd);
  try {
    if (folder.list().length > 0) return;
  } finally {
    folder.close();
  }
  log(
    `rune: warning: the put folder ${cwd} is empty: no inputs were mounted, so the agent sees nothing of this build; list them in the put step's \`inputs:\` (with \`inputs: detect\`, Concourse mounts only inputs named by the first path segment of a params value)`,
  );
}

/** The put's prompt and where it runs: cwd = src, the inputs readable, prompt_file inside src. */
export function outPrompt(src: string, params: OutParams): OutPrompt {
  let cwd: string;
  try {
    cwd = realpathSync(src);
    Root.open(cwd).close(); // a folder, reached through no link once resolved
  } catch (error) {
    throw new RuneError('USAGE', `out: the source folder ${src} is not usable: ${(error as Error).message}`);
  }
  // The agent reads the put's inputs: one it cannot read fails now, before the model is called.
  const hint = "the agent reads the put's inputs; make them readable by the user the resource image runs as";
  requireReadableFolder('out', cwd, 'the put folder', hint);
  const inputs = inputFolders(cwd);
  for (const input of inputs) requireReadableFolder('out', input, `the input ${basename(input)}`, hint);
  if (params.prompt !== undefined && params.prompt_file !== undefined) {
    throw new RuneError('USAGE', 'out: give params.prompt or params.prompt_file, not both');
  }
  let prompt = params.prompt;
  if (params.prompt_file !== undefined) {
    const file = resolveInside(cwd, params.prompt_file, 'out: params.prompt_file');
    try {
      prompt = readInside(cwd, file);
    } catch (error) {
      throw new RuneError('IO', `out: cannot read params.prompt_file: ${(error as Error).message}`, {
        cause: error,
      });
    }
    if (prompt.trim() === '')
      throw new RuneError('USAGE', `out: params.prompt_file ${params.prompt_file} is empty`);
  }
  if (prompt === undefined) {
    throw new RuneError('USAGE', 'out: params.prompt or params.prompt_file is required');
  }
  const run: OutPrompt = { prompt, name: params.prompt_file ?? prompt, cwd, readPaths: inputs };
  if (params.system_prompt !== undefined) run.systemPrompt = params.system_prompt;
  if (params.append_system_prompt !== undefined) run.appendSystemPrompt = params.append_system_prompt;
  return run;
}
