// An MCP stdio transport over a process the sandbox started: newline-delimited JSON-RPC on its
// stdin/stdout. The SDK's own StdioClientTransport would spawn the server outside the sandbox.
import type { Readable } from 'node:stream';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { SandboxedProcess } from '../sandbox/types.ts';

export interface ExitInfo {
  exitCode: number | null;
  signal: string | null;
}

export interface SandboxedStdioTransportOptions {
  /** Each chunk the server writes to stderr (servers log there; it is never protocol). */
  onStderr?: (text: string) => void;
  /** How long close() waits after ending stdin before it sends SIGTERM to the process group. */
  closeGraceMs?: number;
  /** How long close() waits after SIGTERM before it sends SIGKILL. */
  termGraceMs?: number;
  /** Largest single message accepted from the server; a bigger one closes the connection. */
  maxMessageBytes?: number;
}

const STDERR_TAIL_BYTES = 4096;
// After the process exits, stdout may still hold the last messages and stderr the last lines an
// error message quotes; wait this long for their ends.
const OUTPUT_DRAIN_MS = 200;

export class SandboxedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  private readonly readBuffer: ReadBuffer;
  private process: SandboxedProcess | undefined;
  private closed = false;
  private stderrTail = '';
  private exit: ExitInfo | undefined;

  constructor(
    private readonly spawnProcess: () => SandboxedProcess,
    private readonly options: SandboxedStdioTransportOptions = {},
  ) {
    this.readBuffer = new ReadBuffer({ maxBufferSize: options.maxMessageBytes });
  }

  /** The process id, once started. */
  get pid(): number | undefined {
    return this.process?.pid;
  }

  /** How the process ended, once it has. */
  get exitInfo(): ExitInfo | undefined {
    return this.exit;
  }

  /** The last few KiB the server wrote to stderr, for error messages. */
  get stderr(): string {
    return this.stderrTail;
  }

  get sandboxProcess(): SandboxedProcess | undefined {
    return this.process;
  }

  async start(): Promise<void> {
    if (this.process) throw new Error('SandboxedStdioTransport already started');
    const child = this.spawnProcess();
    this.process = child;
    // Both ends, stdout's and stderr's: the exit can be seen before the last chunks are read.
    const outputDone = Promise.all([ended(child.stdout), ended(child.stderr)]);

    child.stdout.on('data', (chunk: Buffer | string) => {
      try {
        this.readBuffer.append(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      } catch (error) {
        // An oversized message: the stream cannot be resynchronised, so the connection ends.
        this.onerror?.(error as Error);
        void this.close();
        return;
      }
      this.drain();
    });
    child.stdout.on('error', (error: Error) => this.onerror?.(error));
    // EPIPE when the server has gone: the exit handler reports it, this keeps Node from throwing.
    child.stdin.on('error', (error: Error) => this.onerror?.(error));
    child.stderr.on('data', (chunk: Buffer | string) => {
      const text = chunk.toString();
      this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL_BYTES);
      this.options.onStderr?.(text);
    });
    child.stderr.on('error', () => {});

    void child.exited.then(async (info) => {
      this.exit = info;
      await Promise.race([outputDone, new Promise((resolve) => setTimeout(resolve, OUTPUT_DRAIN_MS))]);
      this.finish();
    });
  }

  private drain(): void {
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.readBuffer.readMessage();
      } catch (error) {
        // A line that is not JSON-RPC (a server printing to stdout): reported, then skipped.
        this.onerror?.(error as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    const child = this.process;
    if (!child || this.closed || this.exit) return Promise.reject(new Error('MCP server is not running'));
    return new Promise((resolve, reject) => {
      const ok = child.stdin.write(serializeMessage(message), (error) => {
        if (error) reject(error);
      });
      if (ok) resolve();
      else child.stdin.once('drain', () => resolve());
    });
  }

  /**
   * Stops the server the way the MCP spec asks for stdio: stdin ended, a grace time, SIGTERM to the
   * process group, another grace time, then SIGKILL.
   */
  async close(): Promise<void> {
    const child = this.process;
    if (!child) {
      this.finish();
      return;
    }
    const exitedWithin = (ms: number) =>
      Promise.race([
        child.exited.then(() => true),
        new Promise<false>((resolve) => setTimeout(() => resolve(false), ms).unref()),
      ]);
    if (!this.exit) {
      try {
        child.stdin.end();
      } catch {
        // stdin is already gone; the signals below end the process.
      }
      if (!(await exitedWithin(this.options.closeGraceMs ?? 2000))) {
        child.kill('SIGTERM');
        if (!(await exitedWithin(this.options.termGraceMs ?? 2000))) {
          child.kill('SIGKILL');
          await exitedWithin(2000);
        }
      }
    }
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.readBuffer.clear();
    this.onclose?.();
  }
}

/** Resolves when `stream` has ended or closed (at once when it already has). */
function ended(stream: NodeJS.ReadableStream): Promise<void> {
  const state = stream as Partial<Readable>;
  if (state.readableEnded || state.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    stream.once('end', () => resolve());
    stream.once('close', () => resolve());
  });
}
