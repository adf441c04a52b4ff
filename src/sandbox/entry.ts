// The hidden re-exec subcommands (_landlock, _seccomp, _net-guard): rune's sandbox protocol, kept
// for debugging one layer at a time. Synchronous; they load no addon and run the static helper
// with only the named layer, e.g. `rune _landlock --ro /usr --rw /tmp/x -- cmd …`. Plain forms of
// `rune sandbox … -- CMD` are run here too (src/dispatch.ts), so they need no commander or agent code.
import { spawnSync } from 'node:child_process';
import { constants } from 'node:os';
import type { ModeContext } from '../core/bundles.ts';
import { markMainPath } from '../core/code-cache.ts';
import { domainPatternProblem } from '../core/domains.ts';
import { RuneError } from '../core/errors.ts';
import { parseSandboxInvocation } from './argv.ts';
import { sandboxHelperPath } from './helper.ts';
import { flag } from './helper-args.ts';
import { resolveNameSync } from './resolve.ts';
import { guardPlan, guardTargets, literalAddresses } from './targets.ts';

const USAGE: Record<string, string> = {
  _landlock: 'rune _landlock [--ro PATH]... [--rw PATH]... -- PROGRAM [ARGS...]',
  _seccomp: 'rune _seccomp -- PROGRAM [ARGS...]',
  '_net-guard': 'rune _net-guard [--allow-domain NAME]... -- PROGRAM [ARGS...]',
};

export function helperArgsFor(sub: string, args: readonly string[], resolve = resolveNameSync): string[] {
  const usage = USAGE[sub];
  if (!usage) throw new RuneError('USAGE', `unknown sandbox subcommand ${sub}`);
  const split = args.indexOf('--');
  if (split < 0 || split === args.length - 1)
    throw new RuneError('USAGE', `${sub}: no command after --`, { details: [`usage: ${usage}`] });
  const flags = args.slice(0, split);
  const command = args.slice(split + 1);
  const out: string[] = [];
  if (sub === '_landlock') out.push(...flag('--no-namespaces'), ...flag('--no-seccomp'));
  if (sub === '_seccomp') out.push(...flag('--no-namespaces'), ...flag('--no-landlock'));
  // The net guard alone: the host's whole tree stays in the view (writable, as without a sandbox).
  if (sub === '_net-guard') out.push(...flag('--no-landlock'), ...flag('--rw', '/'));
  const domains: string[] = [];
  for (let i = 0; i < flags.length; i++) {
    const given = flags[i];
    const value = flags[i + 1];
    const grant = sub === '_landlock' && (given === '--ro' || given === '--rw');
    if ((!grant && !(sub === '_net-guard' && given === '--allow-domain')) || value === undefined)
      throw new RuneError('USAGE', `${sub}: unexpected ${given ?? 'argument'}`, {
        details: [`usage: ${usage}`],
      });
    i++;
    if (grant) out.push(...flag(given, value));
    else if (guardTargets([value]).length === 0)
      throw new RuneError(
        'USAGE',
        `${sub}: --allow-domain ${value}: ${domainPatternProblem(value) ?? 'a wildcard cannot be resolved ahead'}`,
      );
    else domains.push(value);
  }
  const resolved = guardTargets(domains).map((target) => {
    const addresses = literalAddresses(target.host) ?? resolve(target.host);
    if (addresses.length === 0)
      process.stderr.write(`rune ${sub}: ${target.host} did not resolve; nothing is allowed for it\n`);
    return { name: target.host, ...(target.port !== undefined ? { port: target.port } : {}), addresses };
  });
  const guard = guardPlan(resolved, domains);
  for (const refused of guard.refused)
    process.stderr.write(`rune ${sub}: not allowed (list the address itself to allow it): ${refused}\n`);
  for (const address of guard.allow) out.push(...flag('--allow-addr', address));
  for (const line of guard.hosts) out.push(...flag('--host', line));
  if (sub === '_net-guard') out.push(...flag('--tmp-mb', '16'));
  return [...out, '--', ...command];
}

export function run(context: ModeContext): number | Promise<number> {
  // `rune sandbox … -- CMD` in a form src/dispatch.ts sent here rather than to commander.
  const invocation = parseSandboxInvocation(context.args);
  if (invocation)
    return import('./command.ts').then(async ({ runSandboxCommand }) => {
      const code = await runSandboxCommand(invocation.command, invocation.options);
      // The cache then covers this path, even if a hidden subcommand ran first.
      markMainPath();
      return code;
    });
  const sub = context.args[0] ?? '';
  const args = helperArgsFor(sub, context.args.slice(1));
  let helper: string;
  try {
    helper = sandboxHelperPath();
  } catch (cause) {
    throw new RuneError('SANDBOX_UNAVAILABLE', `${sub}: the sandbox helper is not available`, { cause });
  }
  const result = spawnSync(helper, args, { stdio: 'inherit' });
  if (result.error) throw new RuneError('SANDBOX_UNAVAILABLE', `${sub}: ${result.error.message}`);
  if (result.status !== null) return result.status;
  const signal = result.signal ? constants.signals[result.signal] : 0;
  return 128 + (signal ?? 0);
}
