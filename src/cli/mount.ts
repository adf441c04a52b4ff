// `rune mount DIR [--foreground]` and `rune mount --unmount DIR`: the CLI's side — the agent's flags
// and configuration (the policy, the sandbox, the MCP servers a run would have), then src/mount/.
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { RuneError } from '../core/errors.ts';
import { writeStd } from '../core/stdio.ts';
import { readyReporter, startInBackground } from '../mount/background.ts';
import { serveMount } from '../mount/serve.ts';
import { unmountCommand } from '../mount/unmount.ts';
import { setupAgent } from './agent.ts';
import type { AgentFlags } from './flags.ts';

export interface MountFlags extends AgentFlags {
  foreground?: boolean;
  unmount?: boolean;
}

const stderr = (text: string) => writeStd(2, text);

export async function mountCommand(dir: string, flags: MountFlags, env = process.env): Promise<number> {
  if (flags.unmount) {
    if (flags.foreground) {
      throw new RuneError(
        'USAGE',
        '--unmount and --foreground cannot be used together: rune mount --unmount DIR',
      );
    }
    return unmountCommand(dir, process.cwd(), env, stderr);
  }
  // The configuration is checked here, also for a background start: its problems reach the terminal.
  const setup = setupAgent(flags, env);
  if (!flags.foreground) return startInBackground(dir, env, stderr);
  const absolute = resolve(setup.cwd, dir);
  let mountpoint = absolute;
  try {
    mountpoint = realpathSync(absolute);
  } catch {
    // serveMount says what is wrong with it.
  }
  const ready = readyReporter(env);
  return serveMount(
    dir,
    mountpoint,
    {
      config: setup.config,
      logger: setup.logger,
      env,
      cwd: setup.cwd,
      ...(flags.mcpStdio ? { mcpStdio: flags.mcpStdio } : {}),
      ...(flags.mcpHttp ? { mcpHttp: flags.mcpHttp } : {}),
      ...(flags.yes ? { yes: true } : {}),
    },
    { stderr, ...(ready ? { ready } : {}) },
  );
}
