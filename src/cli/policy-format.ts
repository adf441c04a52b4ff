// The text of `/policy` and `/policy full`: the mode, every list, the secrets floor and, when the
// sandbox report is passed in, each layer. Pure; the interactive session prints it.
import type { PolicyMode, RuneConfig } from '../config/schema.ts';
import { describeEnvironmentRule } from '../sandbox/env.ts';
import { describeTarget } from '../sandbox/targets.ts';
import type { LayerReport } from '../sandbox/types.ts';

export interface PolicyLayersView {
  /** What this machine offers. */
  available: readonly LayerReport[];
  /** What the last tool call got, when there was one. */
  lastCall?: readonly LayerReport[];
}

const MODE_NOTE: Record<PolicyMode, string> = {
  allowlist: 'anything the lists do not cover is blocked and the model is told why',
  confirm: 'anything the lists do not cover is asked about',
  unrestricted: 'policy checks are skipped; the sandbox still applies',
};

/**
 * `/policy` passes `layers: null` (no sandbox section); `/policy full` passes the sandbox report, and
 * without one (undefined) the text says the report is unavailable.
 */
export function formatPolicy(
  config: RuneConfig,
  mode: PolicyMode,
  layers?: PolicyLayersView | null,
  floor?: readonly string[],
): string {
  const p = config.policy;
  const list = (name: string, values: readonly string[]) =>
    `  ${name.padEnd(18)} ${values.length > 0 ? values.join(', ') : '(none)'}`;
  const lines = [
    `policy mode: ${mode} (${MODE_NOTE[mode]})`,
    list('allowed_commands', p.allowed_commands),
    list('allowed_domains', p.allowed_domains),
    list('allowed_paths_ro', [...p.allowed_paths_ro, '(working directory)']),
    list('allowed_paths_rw', p.allowed_paths_rw),
    list('allowed_files_ro', p.allowed_files_ro),
    list('allowed_files_rw', p.allowed_files_rw),
    list('denied_paths', p.denied_paths),
    list('allowed_mcp_tools', p.allowed_mcp_tools),
  ];
  if (floor && floor.length > 0) {
    lines.push(
      `  ${'never (floor)'.padEnd(18)} ${mode === 'unrestricted' ? '(lifted by --unrestricted) ' : ''}${floor.join(', ')}`,
    );
  }
  if (layers === null) return `${lines.join('\n')}\n`;
  lines.push(`sandbox mode: ${config.sandbox.mode}`);
  lines.push(...sandboxRules(config));
  if (layers === undefined) {
    lines.push('  sandbox layers: report unavailable (no sandbox report was given)');
    return `${lines.join('\n')}\n`;
  }
  lines.push('layers on this machine:');
  for (const layer of layers.available) {
    lines.push(`  ${layer.layer.padEnd(12)} ${layer.applied ? 'available' : 'unavailable'}: ${layer.detail}`);
  }
  lines.push(layers.lastCall ? 'last tool call:' : 'last tool call: none yet');
  for (const layer of layers.lastCall ?? []) {
    lines.push(`  ${layer.layer.padEnd(12)} ${layer.applied ? 'applied' : 'not applied'}: ${layer.detail}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The rules that hold for every tool process and for rune itself, in words (README "Sandbox" says the same). */
export function sandboxRules(config: RuneConfig): string[] {
  const domains = config.policy.allowed_domains;
  return [
    'sandbox rules:',
    `  network      ${
      domains.length === 0
        ? 'no allowed_domains: tools get an empty network namespace'
        : 'only TCP to the addresses rune resolved for allowed_domains, at the port an entry names; every connect, shutdown and Fast Open send is checked by the net guard; a name leads to a loopback, private or link-local address only when that address is listed itself (localhost lists loopback)'
    }`,
    ...domains.map((entry) => `    ${describeTarget(entry)}`),
    '  git          every git folder under a writable folder (nested, submodule, worktree, bare) has config, hooks, info and .git files read-only; after each call rune removes settings that run programs (core.fsmonitor, core.pager, aliases with !, filters, credential helpers, includes, …) from configs the call created or changed, and makes new hooks non-executable',
    `  environment  ${describeEnvironmentRule(config.sandbox.env_passthrough)}`,
    `  files        .env*, rune's own config and, in a writable home folder, the shell's start-up files (~/.bashrc, ~/.profile, …) and ~/.gitconfig stay read-only inside writable folders; secret folders (~/.ssh, ~/.aws, …) are hidden; one of these a call creates is moved aside to NAME.rune-rejected after the call; without namespaces (a container runtime's seccomp profile) Landlock cannot keep a path inside a writable grant read-only or hidden, so there a writable grant holding rune's own folder or the home folder's start-up files and ~/.gitconfig (the home folder, a folder above it, ~/.config) is refused before the call runs${
      config.sandbox.accept_unprotected_grants
        ? '; ACCEPTED here by sandbox.accept_unprotected_grants = true: such a grant runs, and a command may change what runs later outside the sandbox'
        : ' (sandbox.accept_unprotected_grants = true accepts it)'
    }; the .env files, rune.toml and git files inside other writable grants are not protected there (the namespaces layer's report says so)`,
    "  processes    nothing a tool starts outlives its call: its PID namespace ends with it, or, without namespaces, the sandbox helper (the call's child subreaper) kills every process left and seccomp refuses setsid and setpgid; rune's own command line and environment are unreadable to tools",
    "  rune itself  outside the sandbox rune touches a path a tool could have changed (writable grants, Concourse folders, a tool's argument) only by descriptor from a folder it holds: never through a symbolic link, never blocking on a FIFO, only regular files and folders; grants are resolved once per run, and one a call replaced (a link or another folder in its place) is refused, never followed; a link, FIFO, socket or device left where git reads a file is moved aside and reported",
  ];
}
