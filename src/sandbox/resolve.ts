// Name resolution for the net guard: rune resolves each allowed domain itself, outside the sandbox,
// and only those addresses are reachable (and written into the sandbox's /etc/hosts).
import { spawnSync } from 'node:child_process';
import type { ResolvedName } from './plan.ts';
import { guardTargets, literalAddresses } from './targets.ts';

/** Addresses of `name` through the system's name service (getent, so /etc/hosts and NSS count). */
export function resolveNameSync(name: string): string[] {
  const result = spawnSync('getent', ['ahosts', name], { encoding: 'utf8', timeout: 5000 });
  if (result.status !== 0 || !result.stdout) return [];
  return [
    ...new Set(
      result.stdout
        .split('\n')
        .map((line) => line.split(/\s+/)[0] ?? '')
        .filter(Boolean),
    ),
  ];
}

/** The same without blocking the event loop. node:dns is loaded on first use, not at start-up. */
export async function resolveName(name: string): Promise<string[]> {
  const dns = process.getBuiltinModule('node:dns/promises') as typeof import('node:dns/promises');
  try {
    const all = await dns.lookup(name, { all: true, verbatim: true });
    return [...new Set(all.map((a) => a.address))];
  } catch {
    return [];
  }
}

/** The net guard's targets with their addresses: IP literals as they are, names through DNS. */
export async function resolveTargets(entries: readonly string[]): Promise<ResolvedName[]> {
  return Promise.all(
    guardTargets(entries).map(async (t) => ({
      name: t.host,
      entry: t.entry,
      ...(t.port !== undefined ? { port: t.port } : {}),
      addresses: literalAddresses(t.host) ?? (await resolveName(t.host)),
    })),
  );
}

export function resolveTargetsSync(entries: readonly string[]): ResolvedName[] {
  return guardTargets(entries).map((t) => ({
    name: t.host,
    entry: t.entry,
    ...(t.port !== undefined ? { port: t.port } : {}),
    addresses: literalAddresses(t.host) ?? resolveNameSync(t.host),
  }));
}
