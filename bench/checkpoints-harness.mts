// The in-process half of bench/checkpoints.mjs (bundled by it with esbuild): execute_cmd calls
// through the real sandbox executor, with and without a checkpoint around each (as the run loop
// makes them), each case on its own copy of the repository so one case's edits are never another
// case's "changed by someone else". Prints one JSON object of samples.
//   node harness.cjs REPO_A REPO_B REPO_C RUNE_HOME ROUNDS EDITS
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Checkpoints } from '../src/agent/checkpoints/recorder.ts';
import { callScope } from '../src/agent/checkpoints/scope.ts';
import { withDefaults } from '../src/config/load.ts';
import { Grants } from '../src/core/fd/index.ts';
import { silentLogger } from '../src/core/logger.ts';
import { protectedPathsFor } from '../src/policy/gate.ts';
import { createSandboxExecutor } from '../src/sandbox/executor.ts';
import { executeCmdTool } from '../src/tools/execute-cmd.ts';
import type { RegisteredTool } from '../src/tools/registry.ts';
import type { ToolContext } from '../src/tools/types.ts';

const [repoA, repoB, repoC, runeHome, roundsArg, editsArg] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
];
const rounds = Number(roundsArg);
const edits = Number(editsArg);
const env = { PATH: '/usr/bin:/bin', HOME: join(runeHome, '..'), RUNE_HOME: runeHome };
const config = withDefaults({
  policy: { allowed_paths_rw: [repoA, repoB, repoC], allowed_commands: ['echo'] },
});
const executor = createSandboxExecutor({ config, logger: silentLogger, mode: 'auto' });
const TARGET = 'src/m1/d1/f1.ts';

function contextFor(repo: string): ToolContext {
  const grants = new Grants();
  grants.pinAll([repo]);
  return {
    cwd: repo,
    config,
    executor,
    env: { PATH: env.PATH, HOME: env.HOME },
    readOnlyPaths: [repo],
    readWritePaths: [repo],
    protectedPaths: protectedPathsFor(config, repo, env),
    grants,
    signal: new AbortController().signal,
  };
}

const tool = { readOnly: false, source: 'builtin', definition: { name: 'execute_cmd' } } as RegisteredTool;

async function command(context: ToolContext, n: number): Promise<void> {
  const result = await executeCmdTool.execute({ cmd: `echo ${n} >> ${TARGET}` }, context);
  if (result.isError) throw new Error(result.content);
}

function recorder(sessionId: string, watch: boolean): Checkpoints {
  return new Checkpoints({ env, sessionId, cwd: repoB, config, logger: silentLogger, watch });
}

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

async function main(): Promise<void> {
  const a = contextFor(repoA);
  const b = contextFor(repoB);
  const c = contextFor(repoC);
  const inotify = recorder('bench-inotify', true);
  const scanning = recorder('bench-scanning', false);
  const scopeB = callScope(tool, {}, b)!;
  const scopeC = callScope(tool, {}, c)!;

  // The first look at each copy: every file read, digested and stored once.
  let start = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  inotify.before('first', 'execute_cmd', scopeB, b.protectedPaths);
  inotify.after('first');
  const firstLook = ms(start);
  const used = process.cpuUsage(cpu);
  const firstLookCpu = (used.user + used.system) / 1000;
  await inotify.store.flush();
  const baselineBytes = inotify.store.bytes;
  start = process.hrtime.bigint();
  scanning.before('first', 'execute_cmd', scopeC, c.protectedPaths);
  scanning.after('first');
  const firstLookScanning = ms(start);

  const samples: Record<string, number[]> = {
    'command, no checkpoint (baseline)': [],
    'command + checkpoint (inotify)': [],
    'command + checkpoint (scanning)': [],
    'checkpoint alone (inotify)': [],
    'checkpoint alone (scanning)': [],
    'flush to disk (fdatasync, overlaps the model request)': [],
  };
  let n = 0;
  for (let round = -2; round < rounds; round++) {
    const take = (name: string, value: number) => round >= 0 && samples[name]!.push(value);
    start = process.hrtime.bigint();
    await command(a, ++n);
    take('command, no checkpoint (baseline)', ms(start));

    start = process.hrtime.bigint();
    inotify.before(`b${n}`, 'execute_cmd', scopeB, b.protectedPaths);
    await command(b, n);
    const kept = inotify.after(`b${n}`);
    take('command + checkpoint (inotify)', ms(start));
    if (kept.changed !== 1 || kept.partial.length > 0) throw new Error(`checkpoint: ${JSON.stringify(kept)}`);
    start = process.hrtime.bigint();
    await inotify.store.flush();
    take('flush to disk (fdatasync, overlaps the model request)', ms(start));

    start = process.hrtime.bigint();
    scanning.before(`c${n}`, 'execute_cmd', scopeC, c.protectedPaths);
    await command(c, n);
    scanning.after(`c${n}`);
    take('command + checkpoint (scanning)', ms(start));

    // The checkpoint's own cost: the same change made in-process, no sandboxed process around it.
    start = process.hrtime.bigint();
    inotify.before(`bb${n}`, 'execute_cmd', scopeB, b.protectedPaths);
    appendFileSync(join(repoB, TARGET), `${n}\n`);
    inotify.after(`bb${n}`);
    take('checkpoint alone (inotify)', ms(start));
    start = process.hrtime.bigint();
    scanning.before(`cc${n}`, 'execute_cmd', scopeC, c.protectedPaths);
    appendFileSync(join(repoC, TARGET), `${n}\n`);
    scanning.after(`cc${n}`);
    take('checkpoint alone (scanning)', ms(start));
  }
  await inotify.close();
  await scanning.close();

  // The store after EDITS edits of different files (one line changed in each), in a new session.
  const sized = recorder('bench-size', true);
  sized.before('first', 'execute_cmd', scopeB, b.protectedPaths);
  sized.after('first');
  const sizeBaseline = sized.store.bytes;
  for (let i = 0; i < edits; i++) {
    const file = join(repoB, 'src', `m${i % 20}`, `d${i}`, `f${i % 20}.ts`);
    sized.before(`e${i}`, 'execute_cmd', scopeB, b.protectedPaths);
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace('export const x = 1;', `export const x = ${i + 2};`),
    );
    const kept = sized.after(`e${i}`);
    if (kept.changed !== 1) throw new Error(`edit ${i}: ${JSON.stringify(kept)}`);
  }
  await sized.store.flush();
  const afterEdits = sized.store.bytes;
  await sized.close();
  process.stdout.write(
    `${JSON.stringify({ samples, firstLook, firstLookCpu, firstLookScanning, baselineBytes, sizeBaseline, afterEdits })}\n`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
