// execute_cmd: `/bin/sh -c CMD` through the sandbox executor. The executor enforces the timeout and
// kills the whole process group; this tool only shapes the result the model reads.
import { z } from 'zod/v4';
import type { SandboxResult } from '../sandbox/types.ts';
import { defineTool } from './types.ts';

/** Each of stdout and stderr is kept up to this many bytes. */
export const COMMAND_OUTPUT_CAP = 16 * 1024;

const schema = z.strictObject({
  cmd: z.string().min(1).describe('Shell command line, run by /bin/sh -c in the working directory'),
});

export function formatCommandResult(result: SandboxResult, timeoutSecs: number): string {
  const lines: string[] = [];
  if (result.timedOut) lines.push(`timed out after ${timeoutSecs} s; the whole process group was killed`);
  else if (result.cancelled) lines.push('cancelled; the whole process group was killed');
  if (result.signal) lines.push(`killed by signal ${result.signal}`);
  else if (result.exitCode !== null) lines.push(`exit code: ${result.exitCode}`);
  const stream = (name: string, text: string, dropped: number): void => {
    if (text === '' && dropped === 0) {
      lines.push(`${name}: (empty)`);
      return;
    }
    lines.push(`${name}:`, text.endsWith('\n') ? text.slice(0, -1) : text);
    if (dropped > 0) {
      lines.push(
        `[truncated: ${name} was cut at ${COMMAND_OUTPUT_CAP} bytes; ${dropped} more bytes dropped]`,
      );
    }
  };
  stream('stdout', result.stdout, result.stdoutDropped);
  stream('stderr', result.stderr, result.stderrDropped);
  return lines.join('\n');
}

export const executeCmdTool = defineTool<z.infer<typeof schema>>({
  name: 'execute_cmd',
  description:
    'Run a shell command (/bin/sh -c) inside the sandbox. Returns the exit code, stdout and stderr (each capped). Default timeout 30 s.',
  schema,
  readOnly: false,
  access: { kind: 'command' },
  async execute(args, context) {
    const timeoutSecs = context.config.sandbox.command_timeout_secs;
    const result = await context.executor.run({
      argv: ['/bin/sh', '-c', args.cmd],
      cwd: context.cwd,
      env: context.env,
      readOnlyPaths: context.readOnlyPaths,
      readWritePaths: context.readWritePaths,
      ...(context.grants ? { grants: context.grants } : {}),
      allowedDomains: [...context.config.policy.allowed_domains],
      timeoutMs: timeoutSecs * 1000,
      maxOutputBytes: COMMAND_OUTPUT_CAP,
      signal: context.signal,
    });
    return {
      content: formatCommandResult(result, timeoutSecs),
      isError: result.timedOut || result.cancelled || result.exitCode !== 0,
      layers: result.layers,
    };
  },
});
