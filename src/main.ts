// Entry point: picks one of rune's four programs before anything else is parsed
// (docs/adr/0001-architecture.md), runs it, and is the only place that exits the process. Kept tiny: `rune --version` loads nothing else.
import { basename, join } from 'node:path';
import { devAssets } from './core/assets.ts';
import { loadMode, persistCodeCaches } from './core/bundles.ts';
import { startCpuProfile, stopCpuProfile } from './core/cpu-profile.ts';
import { formatError, RuneError, toRuneError } from './core/errors.ts';
import { redact } from './core/redact.ts';
import { onBrokenPipe, writeStd } from './core/stdio.ts';
import { terminalText } from './core/terminal-text.ts';
import { VERSION } from './core/version.ts';
import { chooseMode } from './dispatch.ts';

/** The Node streams of stdout and stderr, once some code made them (see exitOnBrokenPipe). */
const created: { stdout?: NodeJS.WriteStream; stderr?: NodeJS.WriteStream } = {};

function flushStdout(): Promise<void> {
  // Writes through core/stdio.ts have landed; the Node stream, if one was made, may queue some.
  const stream = created.stdout;
  return new Promise((resolve) => {
    if (!stream || stream.destroyed || !stream.writable) resolve();
    else stream.write('', () => resolve());
  });
}

/** 128 + SIGPIPE: what a shell reports for a program whose reader went away. */
const EXIT_BROKEN_PIPE = 141;

// `rune … | head`: the reader is gone. Node ignores SIGPIPE, so a write fails with EPIPE, and an
// unhandled stream error would crash with a stack trace. Stop quietly, as a killed program would.
// The listener goes on when some code first asks for the stream: making process.stdout for a pipe
// loads net and the stream machinery, which a run writing through core/stdio.ts never pays.
function exitOnBrokenPipe(name: 'stdout' | 'stderr'): void {
  const attach = (stream: NodeJS.WriteStream): NodeJS.WriteStream => {
    if (created[name] === stream) return stream;
    created[name] = stream;
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      process.exit(EXIT_BROKEN_PIPE);
    });
    return stream;
  };
  const descriptor = Object.getOwnPropertyDescriptor(process, name);
  const get = descriptor?.get;
  if (!get || !descriptor.configurable) {
    attach(process[name]);
    return;
  }
  // Node's own getter makes the stream once and keeps it; this one adds the listener that time.
  Object.defineProperty(process, name, {
    configurable: true,
    enumerable: descriptor.enumerable ?? true,
    get: () => attach(get.call(process) as NodeJS.WriteStream),
  });
}

async function main(): Promise<never> {
  // Inside a SEA argv[0] is the real binary and argv[1] the name it was invoked as (a symlink,
  // a PATH lookup or `exec -a`); outside one argv[1] is the script. User arguments start at 2.
  const invokedAs = basename(process.argv[1] ?? 'rune');
  const { mode, args } = chooseMode(invokedAs, process.argv.slice(2));
  // The command line may hold a secret (--api-key), and /proc/PID/cmdline is readable by every
  // process of the same user where no PID namespace hides rune (the sandbox's container fallback).
  // Setting the title overwrites the original argv block in place (libuv zero-fills all of it).
  process.title = mode === 'notes' ? `${invokedAs} notes` : invokedAs;
  devAssets.dir ??= join(__dirname, '..');
  exitOnBrokenPipe('stdout');
  exitOnBrokenPipe('stderr');
  onBrokenPipe(() => process.exit(EXIT_BROKEN_PIPE));
  startCpuProfile();

  let code: number;
  try {
    if (mode === 'version') {
      writeStd(1, `rune ${VERSION}\n`);
      code = 0;
    } else {
      code = await loadMode(mode).run({ args, invokedAs });
    }
  } catch (thrown) {
    const error = toRuneError(thrown);
    // --verbose makes stderr NDJSON for the agent: its last line too.
    const own = args.includes('--') ? args.slice(0, args.indexOf('--')) : args;
    if (mode === 'cli' && (own.includes('--verbose') || own.includes('-v'))) {
      const record = {
        time: new Date().toISOString(),
        level: 'error',
        event: 'cli.failed',
        code: error.code,
        message: error.message,
      };
      writeStd(2, `${redact(JSON.stringify(record))}\n`);
    } else {
      // A provider's or a tool's text can be in the message: shown, never obeyed by the terminal.
      writeStd(2, `${terminalText(redact(formatError(error)))}\n`);
    }
    if (error.code === 'INTERNAL' && process.env.RUNE_DEBUG && thrown instanceof Error && thrown.stack) {
      writeStd(2, `${redact(thrown.stack)}\n`);
    }
    code = error.exitCode;
  }
  await flushStdout();
  persistCodeCaches();
  stopCpuProfile();
  process.exit(code);
}

main().catch((error: unknown) => {
  writeStd(2, `rune: ${redact(String(error))}\n`);
  process.exit(new RuneError('INTERNAL', '').exitCode);
});
