// What this machine offers the sandbox: the kernel probe (kept across runs, probe-cache.ts) and
// the system facts, described as capabilities once per process.
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { isSea } from '../core/assets.ts';
import { processSlot } from '../core/process-slot.ts';
import {
  describeCapabilities,
  type KernelProbe,
  readSystemFacts,
  type SandboxCapabilities,
} from './capabilities.ts';
import { sandboxHelperPath } from './helper.ts';
import { flag } from './helper-args.ts';
import { runeNative } from './native.ts';
import { cachedKernelProbe, probeOf } from './probe-cache.ts';

// Per process, not per bundle copy of this module: every bundle asks the kernel once.
const state = processSlot('rune.sandbox.capabilities', () => ({
  capabilities: undefined as SandboxCapabilities | undefined,
}));

/**
 * The kernel probe (native/src/probe.c). The static helper answers it as a small process of its
 * own; the addon would fork the whole Node process for the namespace test, so it is only the fallback. The binary keeps
 * the answer across runs for the same kernel, boot, binary and confinement (probe-cache.ts).
 */
function probeKernel(): KernelProbe {
  const helper = (): KernelProbe | undefined => {
    try {
      const result = spawnSync(sandboxHelperPath(), flag('--probe'), { encoding: 'utf8', timeout: 5000 });
      if (result.status === 0) return JSON.parse(result.stdout) as KernelProbe;
    } catch {
      // Fall through to the addon.
    }
    return undefined;
  };
  let probe: KernelProbe | undefined;
  try {
    // Only the single executable keeps it: a source-tree run (unit tests) never writes into a home.
    probe = isSea() ? cachedKernelProbe(helperStamp(), helper) : helper();
  } catch {
    probe = helper();
  }
  return probe ?? runeNative().probe();
}

/** Which helper probes: a new build has a new one (its file name carries its sha256). */
function helperStamp(): string {
  const path = sandboxHelperPath();
  const st = statSync(path);
  return `${path}:${st.ino}:${st.size}:${st.mtimeMs}`;
}

/** What this machine offers, probed once per process. */
export function sandboxCapabilities(): SandboxCapabilities {
  if (!state.capabilities) {
    const facts = readSystemFacts();
    try {
      state.capabilities = describeCapabilities(probeKernel(), facts);
    } catch (error) {
      const why = `kernel probe failed: ${(error as Error).message}`;
      const none = { available: false, detail: why };
      state.capabilities = describeCapabilities(
        probeOf(() => -38 /* ENOSYS */),
        facts,
      );
      // Every probed layer is unknown, not refused with the errno the placeholder above carries.
      state.capabilities = {
        ...state.capabilities,
        landlock: { ...none, abi: 0 },
        seccomp: none,
        seccompUserNotif: none,
        userNamespaces: none,
        netNamespaces: none,
        mountNamespaces: none,
        pidNamespaces: none,
      };
    }
  }
  return state.capabilities;
}
