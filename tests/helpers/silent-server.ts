// A server that accepts every connection and never answers: what a hung notes server, model
// provider or MCP server looks like from the client. Connections are counted so a test can wait
// until the client is really stuck in the wait.
import { createServer, type Socket } from 'node:net';

export interface SilentServer {
  url: string;
  port: number;
  /** Connections accepted so far. */
  readonly accepted: number;
  close(): Promise<void>;
}

export async function startSilentServer(): Promise<SilentServer> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    // Read and drop the request so the client's write never blocks; answer nothing.
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    get accepted() {
      return accepted;
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
