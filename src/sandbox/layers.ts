// The layer reports of a call: what the capabilities promise before it runs (expectedLayers) and
// the final word once the helper reported (mergeLayers), in one order.
import type { RuneConfig } from '../config/schema.ts';
import type { SandboxCapabilities } from './capabilities.ts';
import type { CgroupPlan } from './cgroups.ts';
import { LAYER_ORDER } from './native-contract.ts';
import { describeView, parseReport, type ViewSummary } from './plan.ts';
import type { LayerReport } from './types.ts';

export { LAYER_ORDER } from './native-contract.ts';

/** What stands in for a PID namespace (native/src/reaper.c, view-rules.c) and for hiding rune's own process. */
const NO_PID_NAMESPACE =
  "without a PID namespace the helper is the call's child subreaper and kills every process the command leaves when it ends, seccomp refuses setsid and setpgid so rune's kill of the call's process group on a timeout reaches them all, rune's command line is blanked and its environment and memory need CAP_SYS_PTRACE (not dumpable)";

const NO_NAMESPACE_DNS =
  'no network namespace: seccomp refuses the inet and new UNIX sockets a lookup needs; no resolver is reachable';

/**
 * Pathname UNIX sockets in the view's grants (Landlock before ABI 9 does not mediate their connect,
 * a read-only mount does not stop it): the net guard keeps a connection only when its listener is
 * inside the sandbox; without user notification no UNIX socket can be made. Without the view
 * seccomp refuses new UNIX sockets (the namespaces layer says so).
 */
function unixSockets(guard: boolean): string {
  return guard
    ? "pathname UNIX sockets in granted folders: connect() made by the net guard's connector, kept only when SO_PEERCRED names a listener inside the sandbox's PID namespace (EACCES otherwise); UNIX datagram sockets refused (seccomp)"
    : 'pathname UNIX sockets: no new UNIX socket (seccomp; socketpair still works): no seccomp user notification to check a connect()';
}

/**
 * Without a network namespace (a container runtime's seccomp profile) the network is still closed:
 * seccomp refuses inet sockets and Landlock (ABI 4+) TCP bind/connect. Only allowed domains are lost.
 */
function networkLayer(caps: SandboxCapabilities, ns: boolean, net: boolean, guard: boolean): LayerReport {
  const unix = ns && caps.seccomp.available ? `; ${unixSockets(guard)}` : '';
  if (net)
    return {
      layer: 'network',
      applied: true,
      detail: `empty network namespace${guard ? '; allowed domains through the net guard (seccomp user notification + ADDFD)' : '; allowed domains unavailable: no seccomp user notification'}${unix}`,
    };
  if (!caps.seccomp.available)
    return { layer: 'network', applied: false, detail: `no network namespace: ${caps.netNamespaces.detail}` };
  const landlock = caps.landlock.available && caps.landlock.abi >= 4;
  return {
    layer: 'network',
    applied: true,
    detail: `no network namespace (${caps.netNamespaces.detail}): seccomp refuses inet and inet6 sockets${landlock ? '; Landlock denies TCP bind and connect' : ''}; allowed domains unreachable${unix}`,
  };
}

/** The layers a call would get, from the capabilities alone (before anything ran). */
export function expectedLayers(
  caps: SandboxCapabilities,
  cgroups: CgroupPlan,
  config: RuneConfig,
): LayerReport[] {
  const ns = caps.userNamespaces.available && caps.mountNamespaces.available && caps.pidNamespaces.available;
  const net = ns && caps.netNamespaces.available;
  const guard = caps.seccompUserNotif.available && caps.seccomp.available;
  const nsDetail = [caps.userNamespaces, caps.mountNamespaces, caps.pidNamespaces].find(
    (c) => !c.available,
  )?.detail;
  const maxFile = config.sandbox.max_file_mb;
  return [
    { layer: 'cgroups', applied: cgroups.kind !== 'none', detail: cgroups.detail },
    networkLayer(caps, ns, net, guard),
    {
      layer: 'dns',
      applied: net || caps.seccomp.available,
      detail: net
        ? 'generated /etc/hosts with the allowed names only; no resolver reachable'
        : caps.seccomp.available
          ? NO_NAMESPACE_DNS
          : 'no network namespace',
    },
    { layer: 'seccomp', applied: caps.seccomp.available, detail: caps.seccomp.detail },
    { layer: 'landlock', applied: caps.landlock.available, detail: caps.landlock.detail },
    {
      layer: 'namespaces',
      applied: ns,
      detail: ns
        ? "user+mount+pid+net+ipc+uts namespaces; view built from the grants: a new root holding the system folders (read-only), a private /proc, a read-only /sys, a minimal /dev with its own ptys, a private /tmp, and each grant at its place (read-only grants as read-only mounts); /etc secrets hidden; absent unless granted: /home, /root, /run, /var, the host's sockets, disks and terminals; when the command ends, its PID namespace ends every process it left"
        : `${nsDetail ?? 'unavailable'}; without the view, seccomp refuses new UNIX sockets, inet sockets, System V IPC, inotify, xattr changes and terminal-control ioctls, and Landlock keeps the host's disks, ptys, /dev/shm and hidden files of read-only folders out; ${NO_PID_NAMESPACE}`,
    },
    {
      layer: 'rlimits',
      applied: true,
      detail: `RLIMIT_FSIZE ${maxFile} MiB, RLIMIT_NOFILE, wall-clock kill`,
    },
  ];
}

export function switchedOff(reason: string): LayerReport[] {
  return LAYER_ORDER.map((layer) => ({ layer, applied: false, detail: reason }));
}

/** What a prepared call says about its layers before the helper's report. */
export interface Reported {
  /** Whether the helper runs the call (false: sandbox off, or no helper). */
  sandboxed: boolean;
  /** The layers expected from the capabilities, with the cgroup decision made for this call. */
  base: LayerReport[];
  /** Decisions made while planning (DNS of wildcard names, git folders). */
  notes: LayerReport[];
  /** What the view holds (namespaces layer). */
  view?: ViewSummary;
}

/** The final report: what the helper said, the decisions made here, then the expectations. */
export function mergeLayers(
  prepared: Reported,
  reportText: string,
): { layers: LayerReport[]; setupError?: string } {
  if (!prepared.sandboxed) return { layers: prepared.base };
  const parsed = parseReport(reportText);
  const layers = LAYER_ORDER.map((name): LayerReport => {
    const note = prepared.notes.find((n) => n.layer === name);
    const fromHelper = parsed.layers.get(name);
    if (name === 'cgroups') {
      // Our plan has the limits; the helper only says whether joining worked.
      const own = prepared.base.find((l) => l.layer === 'cgroups') as LayerReport;
      return fromHelper && !fromHelper.applied ? fromHelper : own;
    }
    if (name === 'dns' && !fromHelper) {
      const net = parsed.layers.get('network');
      if (net?.applied)
        return {
          layer: 'dns',
          applied: true,
          detail: net.detail.startsWith('no network namespace')
            ? `${NO_NAMESPACE_DNS}${note ? `; ${note.detail}` : ''}`
            : (note?.detail ?? 'empty network namespace: no name resolves'),
        };
    }
    const report = fromHelper ?? {
      layer: name,
      applied: false,
      detail: parsed.setupError ?? 'not reported by the sandbox helper',
    };
    if (name === 'namespaces' && prepared.view && report.applied)
      return {
        ...report,
        detail: `${report.detail}; ${describeView(prepared.view)}${note ? `; ${note.detail}` : ''}`,
      };
    if (name === 'namespaces' && !report.applied) {
      // The helper says what it stood in with; the capability probe says why there was no view.
      const why = prepared.base.find((l) => l.layer === 'namespaces');
      if (why && !why.applied && !report.detail.includes(why.detail.split(';')[0] ?? ''))
        return {
          ...report,
          detail: `${why.detail.split(';')[0]}; ${report.detail}${note ? `; ${note.detail}` : ''}`,
        };
    }
    return note ? { ...report, detail: `${report.detail}; ${note.detail}` } : report;
  });
  return parsed.setupError === undefined ? { layers } : { layers, setupError: parsed.setupError };
}
