import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { LoginRequiredError } from './auth/provider.ts';
import { RemoteNetworkError, RemoteRefusedError } from './fetch.ts';
import { canFallBackToSse, describeRemoteError, isConnectionLoss } from './transports.ts';

const http = (status: number, text = 'x') =>
  new StreamableHTTPError(status, `Error POSTing to endpoint: ${text}`);

describe('remote transport errors', () => {
  it.each([
    [http(404), true],
    [http(405), true],
    [http(400), true],
    [http(401), false],
    [http(500), false],
    [new RemoteNetworkError('cannot reach x: ECONNREFUSED'), false],
  ])('falls back to SSE after %s: %s', (error, expected) => {
    expect(canFallBackToSse(error)).toBe(expected);
  });

  it.each([
    [new RemoteNetworkError('cannot reach x: ECONNRESET'), true],
    [new Error('wrapped', { cause: new RemoteNetworkError('inner') }), true],
    [new Error('SSE stream disconnected: TypeError: terminated'), true],
    [new Error('Maximum reconnection attempts (2) exceeded.'), true],
    [http(404), true],
    [http(400, '{"message":"Bad Request: No valid session ID provided"}'), true],
    [http(400, 'bad arguments'), false],
    [http(500), false],
    [new McpError(ErrorCode.RequestTimeout, 'timed out'), false],
    [new RemoteRefusedError('not allowed'), false],
  ])('counts %s as a lost connection: %s', (error, expected) => {
    expect(isConnectionLoss(error)).toBe(expected);
  });

  it.each([
    [new RemoteRefusedError('its host x is not in allowed_domains'), 'its host x is not in allowed_domains'],
    [new LoginRequiredError('run rune mcp login x'), 'run rune mcp login x'],
    [
      new McpError(ErrorCode.RequestTimeout, 'Request timed out'),
      'no answer to the MCP handshake within 30 s',
    ],
    [http(401), 'the server refused the credentials (HTTP 401): check the token it is given'],
    [new UnauthorizedError(), 'the server did not accept the login'],
    [
      new Error('outer', { cause: new RemoteNetworkError('cannot reach x: EHOSTUNREACH') }),
      'cannot reach x: EHOSTUNREACH',
    ],
  ])('describes %s', (error, text) => {
    expect(describeRemoteError(error, 30_000)).toBe(text);
  });
});
