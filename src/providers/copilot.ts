// GitHub Copilot: the GitHub token is exchanged for a short-lived Copilot token, which is cached
// and exchanged again shortly before it expires; chat then speaks the OpenAI wire with the
// headers Copilot insists on.
import type { Logger } from '../core/logger.ts';
import { registerSecret } from '../core/redact.ts';
import { failureFromResponse, ProviderFailure } from './failure.ts';
import type { FetchLike } from './http-fetch.ts';

export const COPILOT_TOKEN_URL = 'https://api.github.com/copilot_internal/v2/token';
export const COPILOT_API = 'https://api.githubcopilot.com';

// Copilot accepts requests only from editors it knows; these are the values the VS Code chat
// extension sends, as other third-party clients do.
export const COPILOT_HEADERS: Record<string, string> = {
  'Editor-Version': 'vscode/1.99.3',
  'Editor-Plugin-Version': 'copilot-chat/0.26.7',
  'Copilot-Integration-Id': 'vscode-chat',
  'User-Agent': 'GitHubCopilotChat/0.26.7',
  'Openai-Intent': 'conversation-panel',
};

/** Exchange again this long before the token says it expires. */
const REFRESH_MARGIN_MS = 60_000;

export interface CopilotToken {
  token: string;
  /** Epoch milliseconds after which the token is exchanged again. */
  refreshAt: number;
  /** The chat endpoint the token is meant for. */
  apiBase: string | undefined;
}

export interface CopilotTokenOptions {
  githubToken: string;
  tokenUrl: string;
  fetch: FetchLike;
  now: () => number;
  logger: Logger;
}

export class CopilotTokenSource {
  private current: CopilotToken | undefined;
  private pending: Promise<CopilotToken> | undefined;

  constructor(private readonly options: CopilotTokenOptions) {}

  /** A token valid for at least another minute, exchanged again when needed. */
  async get(signal: AbortSignal): Promise<CopilotToken> {
    const now = this.options.now();
    if (this.current && now < this.current.refreshAt) return this.current;
    // Parallel callers share one exchange.
    this.pending ??= this.exchange(signal).finally(() => {
      this.pending = undefined;
    });
    this.current = await this.pending;
    return this.current;
  }

  /** Forget the token (the server refused it), so the next get() exchanges again. */
  invalidate(): void {
    this.current = undefined;
  }

  private async exchange(signal: AbortSignal): Promise<CopilotToken> {
    const { tokenUrl, githubToken, logger } = this.options;
    const response = await this.options.fetch(tokenUrl, {
      method: 'GET',
      headers: { Authorization: `token ${githubToken}`, Accept: 'application/json', ...COPILOT_HEADERS },
      signal,
    });
    if (!response.ok) {
      const failure = await failureFromResponse(response, this.options.now());
      throw new ProviderFailure('http', `Copilot token exchange: ${failure.message}`, {
        status: failure.status ?? response.status,
        ...(failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs }),
      });
    }
    const body = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined;
    const token = body?.token;
    if (typeof token !== 'string' || !token) {
      throw new ProviderFailure('protocol', 'Copilot token exchange: the answer holds no token');
    }
    registerSecret(token);
    const expiresAtSecs = typeof body?.expires_at === 'number' ? body.expires_at : undefined;
    const refreshIn = typeof body?.refresh_in === 'number' ? body.refresh_in : undefined;
    const now = this.options.now();
    // Whichever comes first: the server's refresh_in, or a minute before expires_at.
    const candidates = [
      ...(refreshIn !== undefined ? [now + refreshIn * 1000] : []),
      ...(expiresAtSecs !== undefined ? [expiresAtSecs * 1000 - REFRESH_MARGIN_MS] : []),
    ];
    const refreshAt = candidates.length > 0 ? Math.min(...candidates) : now + 10 * 60_000;
    const endpoints = body?.endpoints as { api?: unknown } | undefined;
    const apiBase = typeof endpoints?.api === 'string' ? endpoints.api : undefined;
    logger.debug('provider.copilot_token', { refreshInMs: refreshAt - now, apiBase });
    return { token, refreshAt, apiBase };
  }
}
