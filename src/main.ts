// Entry point: picks one of rune's four programs before anything else is parsed
// (docs/adr/0001-architecture.md), runs it, and is the only place that exits the process. Kept tiny: `rune --version` loads nothing else.
import { basename, join } from 'node:path';
import { loadMode, persistCodeCaches } from './core/bundles.ts';
import { startCpuProfile, stopCpuProfile } from './core/cpu-profile.ts';
import { formatError, RuneError, toRuneError } from './core/errors.ts';
import { redact } from './core/redact.ts';
import { VERSION } from './core/version.ts';
import { chooseMode } from './dispatch.ts';

function flushStdout(): Promise<void> {
  // A pipe is asynchronous in Node: exiting before the queued writes land would cut the output.
  return new Promise((resolve) => {
    if (process.stdout.destroyed || !process.stdout.writable) resolve();
    else process.stdout.write('', () => resolve());
  });
}

/** 128 + SIGPIPE: what a shell reports for a program whose reader went away. */
const EXIT_BROKEN_PIPE = 141;

// `rune … | head`: the reader is gone. Node ignores SIGPIPE, so a write fails with EPIPE, and an
// unhandled stream error would crash with a stack trace. Stop quietly, as a killed program would.
function exitOnBrokenPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(EXIT_BROKEN_PIPE);
  });
}

async function main(): Promise<never> {
  // Inside a SEA argv[0] is the real binary and argv[1] the name it was invoked as (a symlink,
  // a PATH lookup or `exec -a`); outside one argv[1] is the script. User arguments start at 2.
  const invokedAs = basename(process.argv[1] ?? 'rune');
  const { mode, args } = chooseMode(invokedAs, process.argv.slice(2));
  (globalThis as { __runeAssetDir?: string }).__runeAssetDir ??= join(__dirname, '..');
  exitOnBrokenPipe(process.stdout);
  // `--version` never writes to stderr; creating the stream would cost its start-up.
  if (mode !== 'version') exitOnBrokenPipe(process.stderr);
  startCpuProfile();

  let code: number;
  try {
    if (mode === 'version') {
      process.stdout.write(`rune ${VERSION}\n`);
      code = 0;
    } else {
      code = await loadMode(mode).run({ args, invokedAs });
    }
  } catch (thrown) {
    const error = toRuneError(thrown);
    process.stderr.write(`${redact(formatError(error))}\n`);
    if (error.code === 'INTERNAL' && process.env.RUNE_DEBUG && thrown instanceof Error && thrown.stack) {
      process.stderr.write(`${redact(thrown.stack)}\n`);
    }
    code = error.exitCode;
  }
  await flushStdout();
  persistCodeCaches();
  stopCpuProfile();
  process.exit(code);
}

main().catch((error: unknown) => {
  process.stderr.write(`rune: ${redact(String(error))}\n`);
  process.exit(new RuneError('INTERNAL', '').exitCode);
});
