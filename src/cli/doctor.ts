// `rune doctor`: what this binary and this machine offer rune, with the reason for everything missing.

import { loadConfig } from '../config/load.ts';
import { isSea } from '../core/assets.ts';
import { isRuneError } from '../core/errors.ts';
import { silentLogger } from '../core/logger.ts';
import { loadedNatives } from '../core/native.ts';
import { configFile } from '../core/paths.ts';
import { openDatabase, type SqliteInfo, sqliteInfo } from '../core/sqlite.ts';
import { VERSION } from '../core/version.ts';
import { type FuseStatus, fuseStatus } from '../mount/status.ts';
import { describeCapabilities, readSystemFacts, type SandboxCapabilities } from '../sandbox/capabilities.ts';
import { createSandboxExecutor } from '../sandbox/executor.ts';
import { runeNative } from '../sandbox/native.ts';
import type { LayerReport } from '../sandbox/types.ts';

export interface DoctorReport {
  version: string;
  node: string;
  platform: string;
  binary: string;
  singleExecutable: boolean;
  config: { file: string; found: boolean; valid: boolean; problems: string[] };
  sqlite: (SqliteInfo & { ok: true; addon?: string }) | { ok: false; error: string };
  sandbox: SandboxCapabilities | { error: string };
  /** The layers a tool call gets with the configuration in use (skipped ones with the reason). */
  sandboxLayers: LayerReport[];
  /** Whether `rune mount` can use FUSE here, and why not. */
  fuse: FuseStatus;
  cache: { native: string[]; notes: string[] };
}

/** `file`: the --config the user gave, so doctor reports the configuration a run would use. */
export function collectDoctorReport(env: NodeJS.ProcessEnv = process.env, file?: string): DoctorReport {
  let config: DoctorReport['config'];
  let sandboxLayers: LayerReport[] = [];
  try {
    const loaded = loadConfig({ env, ...(file ? { file } : {}) });
    try {
      sandboxLayers = createSandboxExecutor({ config: loaded.config, logger: silentLogger }).describe();
    } catch (error) {
      sandboxLayers = [
        { layer: 'namespaces', applied: false, detail: `sandbox unavailable: ${(error as Error).message}` },
      ];
    }
    config = { file: loaded.file, found: loaded.fileFound, valid: true, problems: [] };
  } catch (error) {
    if (!isRuneError(error)) throw error;
    config = { file: file ?? configFile(env), found: true, valid: false, problems: [...error.details] };
  }

  let sqlite: DoctorReport['sqlite'];
  try {
    const db = openDatabase(':memory:');
    sqlite = { ok: true, ...sqliteInfo(db) };
    db.close();
  } catch (error) {
    sqlite = { ok: false, error: (error as Error).message };
  }

  let sandbox: DoctorReport['sandbox'];
  try {
    sandbox = describeCapabilities(runeNative().probe(), readSystemFacts(env));
  } catch (error) {
    sandbox = { error: `the sandbox addon could not be loaded: ${(error as Error).message}` };
  }

  const fuse = fuseStatus(env);
  const natives = loadedNatives();
  const sqliteAddon = natives.find((n) => n.asset.includes('sqlite'));
  if (sqlite.ok && sqliteAddon) sqlite.addon = sqliteAddon.path;
  const notes: string[] = [];
  for (const load of natives) {
    for (const reason of load.skipped) notes.push(`cache folder skipped: ${reason}`);
    if (load.ephemeral)
      notes.push(`${load.asset} was loaded from a temporary folder and removed (no writable cache)`);
  }

  return {
    version: VERSION,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    binary: process.execPath,
    singleExecutable: isSea(),
    config,
    sqlite,
    sandbox,
    sandboxLayers,
    fuse,
    cache: { native: [...new Set(natives.map((n) => n.path))], notes: [...new Set(notes)] },
  };
}

const LAYER_LABELS: Record<keyof SandboxCapabilities, string> = {
  landlock: 'Landlock',
  seccomp: 'seccomp',
  seccompUserNotif: 'seccomp user notification',
  userNamespaces: 'user namespaces',
  netNamespaces: 'network namespaces',
  mountNamespaces: 'mount namespaces',
  pidNamespaces: 'pid namespaces',
  cgroupV2: 'cgroup v2 delegation',
  userSystemd: 'user systemd',
};

export function formatDoctorReport(report: DoctorReport): string {
  const lines: string[] = [];
  const row = (label: string, value: string) => lines.push(`  ${label.padEnd(28)}${value}`);
  lines.push(`rune ${report.version} (node ${report.node}, ${report.platform})`);
  row(
    'binary',
    `${report.binary}${report.singleExecutable ? '' : ' (not a single executable: development run)'}`,
  );
  const cfg = report.config;
  row(
    'config',
    `${cfg.file} ${cfg.found ? (cfg.valid ? '(valid)' : '(INVALID)') : '(not found: defaults in use)'}`,
  );
  for (const problem of cfg.problems) lines.push(`      ${problem}`);
  if (report.sqlite.ok) {
    row('sqlite', `${report.sqlite.version}, FTS5 ${report.sqlite.fts5 ? 'yes' : 'NO'}`);
  } else {
    row('sqlite', `unavailable: ${report.sqlite.error}`);
  }
  for (const dir of report.cache.native) row('native cache', dir);
  for (const note of report.cache.notes) row('', note);
  lines.push('  sandbox');
  if ('error' in report.sandbox) {
    row('  (all layers)', report.sandbox.error);
  } else {
    for (const [key, cap] of Object.entries(report.sandbox) as [
      keyof SandboxCapabilities,
      SandboxCapabilities[keyof SandboxCapabilities],
    ][]) {
      row(`  ${LAYER_LABELS[key]}`, `${cap.available ? 'yes' : 'no '}  ${cap.detail}`);
    }
  }
  lines.push(`  sandbox layers of a tool call (sandbox.mode from the config)`);
  for (const layer of report.sandboxLayers)
    row(`  ${layer.layer}`, `${layer.applied ? 'applied' : 'SKIPPED'}  ${layer.detail}`);
  row('FUSE (rune mount)', `${report.fuse.usable ? 'yes' : 'no '}  ${report.fuse.detail}`);
  return `${lines.join('\n')}\n`;
}
