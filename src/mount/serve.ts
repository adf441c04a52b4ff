// `rune mount DIR --foreground`: everything a mount needs, started in order — the FUSE check, the
// sandbox executor (strict mode refuses here), the MCP servers, the policy gate — then the mount,
// its tree (rebuilt when MCP tools change) and the reaper; it serves until SIGINT/SIGTERM or until
// the kernel ends the mount (`rune mount --unmount`, fusermount3 -u), then unmounts and stops.
import { statSync } from 'node:fs';
import { constants } from 'node:os';
import { createDefaultExecutor, requireStrictLayers } from '../agent/deps.ts';
import { deriveConfig } from '../config/load.ts';
import type { RuneConfig } from '../config/schema.ts';
import { RuneError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { newUuid } from '../core/uuid.ts';
import type { McpManager } from '../mcp/manager.ts';
import { createPolicyGate } from '../policy/gate.ts';
import { ToolRegistry } from '../tools/registry.ts';
import { MountFs } from './filesystem.ts';
import { type MountCalls, runMountedCall } from './invoke.ts';
import { isRuneMount } from './mountinfo.ts';
import { type FuseHandle, type FuseNative, fuseNative } from './native.ts';
import { fuseStatus, requireFuse } from './status.ts';
import { buildTree, InodeTable, type OfferedTool } from './tree.ts';

export interface MountSetup {
  config: RuneConfig;
  logger: Logger;
  env: NodeJS.ProcessEnv;
  cwd: string;
  mcpStdio?: readonly string[];
  mcpHttp?: readonly string[];
  yes?: boolean;
}

export interface MountIo {
  stderr(text: string): void;
  /** Told once the mount serves (or why it could not start): a background start waits for it. */
  ready?(outcome: { ok: true; tools: number } | { ok: false; code: string; message: string }): void;
}

const REAP_EVERY_MS = 60 * 1000;

/** The folder to mount on: an existing folder that is not a rune mount already. */
function checkMountpoint(mountpoint: string, dir: string): void {
  let folder: boolean;
  try {
    folder = statSync(mountpoint).isDirectory();
  } catch (error) {
    throw new RuneError(
      'USAGE',
      `rune mount ${dir}: ${mountpoint} cannot be used (${(error as NodeJS.ErrnoException).code}); give an existing, empty folder`,
    );
  }
  if (!folder) throw new RuneError('USAGE', `rune mount ${dir}: ${mountpoint} is not a folder`);
  if (isRuneMount(mountpoint)) {
    throw new RuneError(
      'USAGE',
      `rune mount ${dir}: ${mountpoint} is a rune mount already; unmount it first: rune mount --unmount ${dir}`,
    );
  }
}

/** The tools as the tree lists them: MCP tools under their server, by the server's own name. */
function offeredTools(registry: ToolRegistry, mcp: McpManager | undefined): OfferedTool[] {
  const serverTool = new Map<string, string>();
  for (const server of mcp?.describeServers() ?? [])
    for (const tool of server.tools) serverTool.set(`${server.name}\0${tool.name}`, tool.serverTool);
  return registry.list().map((tool) => ({
    definition: tool.definition,
    ...(tool.server === undefined
      ? {}
      : {
          server: tool.server,
          serverTool: serverTool.get(`${tool.server}\0${tool.definition.name}`) ?? tool.definition.name,
        }),
  }));
}

interface Started {
  mcp?: McpManager;
  calls: MountCalls;
  registry: ToolRegistry;
}

/** The executor, the MCP servers and the gate: what a model's run would have. */
async function startTools(setup: MountSetup, config: RuneConfig, signal: AbortSignal): Promise<Started> {
  const { logger, cwd, env } = setup;
  const executor = createDefaultExecutor({ prompt: '', config, logger, cwd, env });
  requireStrictLayers(config, executor);
  const registry = new ToolRegistry();
  let mcp: McpManager | undefined;
  if (config.mcp.length > 0 || (setup.mcpStdio?.length ?? 0) > 0 || (setup.mcpHttp?.length ?? 0) > 0) {
    const { startMcpForRun } = await import('../mcp/run-servers.ts');
    mcp = await startMcpForRun({
      config,
      mcpStdio: setup.mcpStdio ?? [],
      mcpHttp: setup.mcpHttp ?? [],
      executor,
      logger,
      cwd,
      env,
      registry,
    });
  }
  const gate = createPolicyGate({
    config,
    cwd,
    env,
    interactive: false,
    yes: setup.yes ?? false,
    sessionId: `mount-${newUuid()}`,
    logger,
  });
  const calls: MountCalls = {
    registry,
    gate,
    executor,
    context: { config, cwd, env },
    serverLayers: (server) => mcp?.describeServers().find((info) => info.name === server)?.layers,
    signal,
  };
  return { ...(mcp ? { mcp } : {}), calls, registry };
}

/** Resolves on SIGINT, SIGTERM or the kernel's end of the mount, saying which. */
function untilStopped(ended: Promise<void>): Promise<string> {
  return new Promise((resolve) => {
    const stop = (why: string) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolve(why);
    };
    const onInt = () => stop('SIGINT');
    const onTerm = () => stop('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    void ended.then(() => stop('unmounted'));
  });
}

export async function serveMount(
  dir: string,
  mountpoint: string,
  setup: MountSetup,
  io: MountIo,
): Promise<number> {
  let native: FuseNative;
  let started: Started | undefined;
  let handle: FuseHandle;
  const stopCalls = new AbortController();
  let ended!: () => void;
  const endedByKernel = new Promise<void>((resolve) => {
    ended = resolve;
  });
  let fs!: MountFs;
  try {
    checkMountpoint(mountpoint, dir);
    const status = fuseStatus(setup.env);
    requireFuse(status);
    native = fuseNative();
    // No tool reaches into the mount: a path under it is denied, and no sandbox view holds it.
    const config = deriveConfig(setup.config, {
      policy: { ...setup.config.policy, denied_paths: [...setup.config.policy.denied_paths, mountpoint] },
    });
    started = await startTools(setup, config, stopCalls.signal);
    const calls = started.calls;
    const options = `fsname=rune,subtype=rune,default_permissions${status.fusermount ? ',auto_unmount' : ''}`;
    try {
      handle = native.fuseMount(mountpoint, options, (event) => {
        if (event.op === 'ended') ended();
        else fs.handle(event);
      });
    } catch (error) {
      throw new RuneError(
        'FUSE_UNAVAILABLE',
        `rune mount ${dir}: the mount failed: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    fs = new MountFs({ reply: (id, kind, value) => native.fuseReply(handle, id, kind, value) }, (request) =>
      runMountedCall(calls, request),
    );
  } catch (error) {
    await started?.mcp?.shutdown();
    const failure = error instanceof RuneError ? error : new RuneError('INTERNAL', (error as Error).message);
    io.ready?.({ ok: false, code: failure.code, message: failure.message });
    throw error;
  }
  const inodes = new InodeTable();
  const rebuild = () => {
    const tree = buildTree(offeredTools(started.registry, started.mcp), inodes);
    for (const problem of tree.skipped) setup.logger.warn('mount.tool_skipped', { message: problem });
    fs.setTree(tree);
    native.fuseSetTree(handle, tree.nodes);
    return tree;
  };
  const tree = rebuild();
  started.mcp?.onToolsChanged(() => rebuild());
  const reaper = setInterval(() => fs.reap(), REAP_EVERY_MS);
  reaper.unref();
  io.stderr(
    `rune mount: ${mountpoint} serves ${tree.endpoints.size / 2} tools (${dir}/README lists them); stop with Ctrl-C, SIGTERM or rune mount --unmount ${dir}\n`,
  );
  io.ready?.({ ok: true, tools: tree.endpoints.size / 2 });
  const why = await untilStopped(endedByKernel);
  clearInterval(reaper);
  native.fuseUnmount(handle, constants.errno.ENOTCONN);
  stopCalls.abort();
  await started.mcp?.shutdown();
  io.stderr(`rune mount: ${mountpoint} unmounted (${why})\n`);
  return 0;
}
