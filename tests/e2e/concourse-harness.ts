// Runs the built binary the way Concourse runs a resource: /opt/resource-like folder with the
// check/in/out symlinks, JSON on stdin, the folder argument, cwd = src for out, BUILD_* set, no TTY.
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { cleanEnv, type RunResult, requireBinary, run, tempDir } from '../helpers/rune.ts';

export type Step = 'check' | 'in' | 'out';

/** What Concourse sets for a resource step (it sets no BUILD_URL). */
export const BUILD_ENV = {
  BUILD_ID: '4242',
  BUILD_NAME: '17',
  BUILD_JOB_NAME: 'ask',
  BUILD_PIPELINE_NAME: 'rune-e2e',
  BUILD_TEAM_NAME: 'main',
  ATC_EXTERNAL_URL: 'https://ci.example.com',
};

/** The build's page, as Concourse's UI addresses it. */
export const BUILD_URL = 'https://ci.example.com/teams/main/pipelines/rune-e2e/jobs/ask/builds/17';

export interface Resource {
  /** The folder holding check, in and out (like /opt/resource). */
  dir: string;
  home: string;
  step(
    step: Step,
    input: unknown,
    options?: { folder?: string; env?: NodeJS.ProcessEnv },
  ): Promise<RunResult>;
}

export function resourceDir(): Resource {
  const bin = requireBinary();
  const dir = tempDir('rune-resource-');
  for (const name of ['check', 'in', 'out']) symlinkSync(bin, join(dir, name));
  const home = tempDir('rune-resource-home-');
  return {
    dir,
    home,
    step(step, input, options = {}) {
      const args = step === 'check' ? [] : [options.folder ?? tempDir(`rune-${step}-`)];
      if (args[0]) mkdirSync(args[0], { recursive: true });
      return run(join(dir, step), args, {
        input: typeof input === 'string' ? input : JSON.stringify(input),
        cwd: step === 'out' ? args[0] : tempDir('rune-cwd-'),
        env: { ...cleanEnv(home), ...BUILD_ENV, ...options.env },
        timeoutMs: 45_000,
      });
    },
  };
}

/** stdout must be exactly one JSON value (and a newline); anything else fails the test. */
export function protocolValue(result: RunResult): unknown {
  if (result.code !== 0) {
    throw new Error(`step failed with ${result.code}:\nstderr: ${result.stderr}\nstdout: ${result.stdout}`);
  }
  return JSON.parse(result.stdout);
}
