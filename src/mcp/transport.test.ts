import { PassThrough } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import type { SandboxedProcess } from '../sandbox/types.ts';
import { SandboxedStdioTransport } from './transport.ts';

/** A process double with real streams: what the "server" writes to stdout reaches the transport. */
function fakeProcess(options: { exitOnStdinEnd?: boolean; ignoreTerm?: boolean } = {}) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let resolveExit!: (info: { exitCode: number | null; signal: string | null }) => void;
  const exited = new Promise<{ exitCode: number | null; signal: string | null }>((r) => {
    resolveExit = r;
  });
  const written: string[] = [];
  stdin.on('data', (chunk: Buffer) => written.push(chunk.toString()));
  const kills: string[] = [];
  const exit = (exitCode: number | null, signal: string | null = null) => {
    stdout.end();
    stderr.end();
    resolveExit({ exitCode, signal });
  };
  if (options.exitOnStdinEnd) stdin.on('end', () => exit(0));
  const process: SandboxedProcess = {
    pid: 4242,
    stdin,
    stdout,
    stderr,
    layers: [],
    exited,
    kill: (signal = 'SIGKILL') => {
      kills.push(signal);
      if (signal === 'SIGTERM' && options.ignoreTerm) return;
      exit(null, signal);
    },
  };
  /** The exit as the parent sees it, before the pipes have been read to their ends. */
  const exitSeen = (exitCode: number) => resolveExit({ exitCode, signal: null });
  return { process, stdout, stderr, written, kills, exit, exitSeen };
}

const ping: JSONRPCMessage = { jsonrpc: '2.0', id: 1, method: 'ping' };

describe('SandboxedStdioTransport', () => {
  it('writes newline-delimited JSON and reads messages split across chunks', async () => {
    const fake = fakeProcess();
    const transport = new SandboxedStdioTransport(() => fake.process);
    const received: JSONRPCMessage[] = [];
    transport.onmessage = (message) => received.push(message);
    await transport.start();
    await transport.send(ping);
    expect(fake.written.join('')).toBe(`${JSON.stringify(ping)}\n`);
    fake.stdout.write('{"jsonrpc":"2.0","id":1,');
    fake.stdout.write('"result":{}}\n{"jsonrpc":"2.0","method":"notifications/x"}\n');
    await new Promise((r) => setImmediate(r));
    expect(received).toEqual([
      { jsonrpc: '2.0', id: 1, result: {} },
      { jsonrpc: '2.0', method: 'notifications/x' },
    ]);
  });

  it('reports a non-protocol stdout line as an error and keeps reading', async () => {
    const fake = fakeProcess();
    const transport = new SandboxedStdioTransport(() => fake.process);
    const received: JSONRPCMessage[] = [];
    const errors: string[] = [];
    transport.onmessage = (message) => received.push(message);
    transport.onerror = (error) => errors.push(error.message);
    await transport.start();
    fake.stdout.write('Server started!\n{"jsonrpc":"2.0","id":2,"result":{}}\n');
    await new Promise((r) => setImmediate(r));
    expect(errors).toHaveLength(1);
    expect(received).toEqual([{ jsonrpc: '2.0', id: 2, result: {} }]);
  });

  it('keeps the stderr tail and says how the process ended, then calls onclose once', async () => {
    const fake = fakeProcess();
    const transport = new SandboxedStdioTransport(() => fake.process);
    let closes = 0;
    transport.onclose = () => closes++;
    await transport.start();
    fake.stderr.write('boom: missing module\n');
    await new Promise((r) => setImmediate(r));
    fake.exit(1);
    await new Promise((r) => setTimeout(r, 20));
    expect(closes).toBe(1);
    expect(transport.exitInfo).toEqual({ exitCode: 1, signal: null });
    expect(transport.stderr).toContain('boom: missing module');
    await expect(transport.send(ping)).rejects.toThrow(/not running/);
    await transport.close();
    expect(closes).toBe(1);
  });

  it('waits for stderr to end after the exit, so the error message quotes its last lines', async () => {
    const fake = fakeProcess();
    const transport = new SandboxedStdioTransport(() => fake.process);
    let tailAtClose = '';
    transport.onclose = () => {
      tailAtClose = transport.stderr;
    };
    await transport.start();
    // The exit is seen first; the last stderr line and stderr's end come a moment later.
    fake.stdout.end();
    fake.exitSeen(1);
    await new Promise((r) => setTimeout(r, 20));
    fake.stderr.write('started as search-server --api-key=x\n');
    fake.stderr.end();
    await new Promise((r) => setTimeout(r, 50));
    expect(tailAtClose).toContain('started as search-server');
  });

  it('close() ends stdin and does not kill a server that exits by itself', async () => {
    const fake = fakeProcess({ exitOnStdinEnd: true });
    const transport = new SandboxedStdioTransport(() => fake.process, { closeGraceMs: 5000 });
    await transport.start();
    await transport.close();
    expect(fake.kills).toHaveLength(0);
    expect(transport.exitInfo).toEqual({ exitCode: 0, signal: null });
  });

  it('close() sends SIGTERM, not SIGKILL, to a server that ignores the end of stdin but obeys SIGTERM', async () => {
    const fake = fakeProcess();
    const transport = new SandboxedStdioTransport(() => fake.process, { closeGraceMs: 50 });
    let closed = false;
    transport.onclose = () => {
      closed = true;
    };
    await transport.start();
    await transport.close();
    expect(fake.kills).toEqual(['SIGTERM']);
    expect(transport.exitInfo).toEqual({ exitCode: null, signal: 'SIGTERM' });
    expect(closed).toBe(true);
  });

  it('close() sends SIGKILL after a second grace time to a server that ignores SIGTERM too', async () => {
    const fake = fakeProcess({ ignoreTerm: true });
    const transport = new SandboxedStdioTransport(() => fake.process, { closeGraceMs: 20, termGraceMs: 20 });
    await transport.start();
    await transport.close();
    expect(fake.kills).toEqual(['SIGTERM', 'SIGKILL']);
    expect(transport.exitInfo).toEqual({ exitCode: null, signal: 'SIGKILL' });
  });

  it('closes the connection when one message exceeds the size limit', async () => {
    const fake = fakeProcess();
    const transport = new SandboxedStdioTransport(() => fake.process, {
      maxMessageBytes: 100,
      closeGraceMs: 10,
    });
    const errors: string[] = [];
    let closed = false;
    transport.onerror = (error) => errors.push(error.message);
    transport.onclose = () => {
      closed = true;
    };
    await transport.start();
    fake.stdout.write(`{"jsonrpc":"2.0","id":1,"result":{"x":"${'y'.repeat(200)}"}}\n`);
    await new Promise((r) => setTimeout(r, 100));
    expect(errors.join()).toMatch(/exceeded maximum size/);
    expect(closed).toBe(true);
  });
});
