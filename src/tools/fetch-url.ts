// fetch_url: one http(s) document as readable text. Every hop (the first request and each redirect)
// is checked: scheme, allowed_domains for a new host, and the resolved addresses, which are checked
// at connect time inside the socket's own lookup so a DNS answer cannot change between check and use.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type http from 'node:http';
import { isIP } from 'node:net';
import { z } from 'zod/v4';
import { addressRefusal } from '../core/addresses.ts';
import { type Deadline, formatSeconds, startDeadline } from '../core/deadline.ts';
import { type DomainPattern, hostAllowed, parseDomainPattern } from '../core/domains.ts';
import { explicitlyAllowed, isMetadataHost } from './addresses.ts';
import { capText, RESULT_CAP_BYTES } from './cap.ts';
import { defineTool, type LookupFn, type ToolContext, ToolError, type ToolOutput } from './types.ts';

export const FETCH_MAX_BYTES = 2 * 1024 * 1024;
export const FETCH_TIMEOUT_MS = 20_000;
const MAX_REDIRECTS = 5;

const schema = z.strictObject({
  url: z.string().min(1).describe('http:// or https:// URL'),
});

interface Hop {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  truncated: boolean;
}

const defaultLookup: LookupFn = (host) =>
  new Promise((resolve, reject) => {
    dnsLookup(host, { all: true }, (error, addresses: LookupAddress[]) => {
      if (error) reject(error);
      else resolve(addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 })));
    });
  });

function checkUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ToolError(`"${raw}" is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ToolError(`only http and https URLs can be fetched, not ${url.protocol}`);
  }
  if (url.username || url.password) throw new ToolError('URLs with credentials are not fetched');
  return url;
}

function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

/** The URL's host and port are covered by allowed_domains (ports of `host:8443` entries count). */
function listed(url: URL, allowed: readonly string[]): boolean {
  const patterns = allowed
    .map(parseDomainPattern)
    .filter((pattern): pattern is DomainPattern => typeof pattern !== 'string');
  return hostAllowed(hostOf(url), portOf(url), patterns) !== undefined;
}

/** A name leads to a private, loopback or link-local address only when that address is listed itself. */
function guardAddress(host: string, address: string, port: number, allowed: readonly string[]): void {
  const reason = addressRefusal(address, port, allowed);
  if (reason) {
    const entry = isIP(address) === 6 ? `[${address}]:${port}` : `${address}:${port}`;
    throw new ToolError(
      `refused to connect to ${host}: ${reason}; list "${entry}" in policy.allowed_domains to allow it`,
    );
  }
}

function request(url: URL, context: ToolContext, signal: AbortSignal): Promise<Hop> {
  const allowed = context.config.policy.allowed_domains;
  const host = hostOf(url);
  const resolve = context.lookup ?? defaultLookup;
  if (isMetadataHost(host) && !explicitlyAllowed(host, allowed)) {
    throw new ToolError(`refused to fetch ${host}: a cloud metadata service`);
  }
  if (isIP(host)) guardAddress(host, host, portOf(url), allowed);

  // Node calls this for every connection it makes, with {all: true} when it races address families.
  const lookup = (
    hostname: string,
    options: { all?: boolean },
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    resolve(hostname)
      .then((addresses) => {
        if (addresses.length === 0) throw new ToolError(`${hostname} did not resolve to any address`);
        for (const entry of addresses) guardAddress(hostname, entry.address, portOf(url), allowed);
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      })
      .catch((error: Error) => callback(error, ''));
  };

  return new Promise((resolvePromise, reject) => {
    // Loaded here, not at the top: https (tls) and zlib would cost every start of rune, fetching or not.
    const client =
      url.protocol === 'https:'
        ? process.getBuiltinModule('node:https')
        : process.getBuiltinModule('node:http');
    const req = client.request(
      url,
      {
        method: 'GET',
        headers: {
          'user-agent': 'rune-fetch/1',
          accept: 'text/html, text/plain, application/json, */*;q=0.5',
          'accept-encoding': 'gzip, deflate, br',
        },
        lookup: lookup as never,
        signal,
      },
      (res) => {
        const encoding = String(res.headers['content-encoding'] ?? '').toLowerCase();
        let stream: NodeJS.ReadableStream = res;
        const zlib = process.getBuiltinModule('node:zlib');
        if (encoding === 'gzip' || encoding === 'x-gzip') stream = res.pipe(zlib.createGunzip());
        else if (encoding === 'deflate') stream = res.pipe(zlib.createInflate());
        else if (encoding === 'br') stream = res.pipe(zlib.createBrotliDecompress());
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        const finish = (): void =>
          resolvePromise({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
            truncated,
          });
        stream.on('data', (chunk: Buffer) => {
          if (truncated) return;
          // Counted after decompression, so a small compressed bomb cannot fill memory.
          if (size + chunk.length > FETCH_MAX_BYTES) {
            chunks.push(chunk.subarray(0, FETCH_MAX_BYTES - size));
            size = FETCH_MAX_BYTES;
            truncated = true;
            req.destroy();
            finish();
            return;
          }
          chunks.push(chunk);
          size += chunk.length;
        });
        stream.on('end', finish);
        stream.on('error', (error: Error) => (truncated ? undefined : reject(error)));
        // A redirect's body is never read in full.
        if ((res.statusCode ?? 0) >= 300 && (res.statusCode ?? 0) < 400) {
          res.destroy();
          resolvePromise({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.alloc(0),
            truncated: false,
          });
        }
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function describeNetworkError(error: unknown, url: URL, deadline: Deadline, outer: AbortSignal): ToolError {
  if (error instanceof ToolError) return error;
  if (outer.aborted) return new ToolError('the fetch was cancelled');
  if (deadline.expired)
    return new ToolError(`no complete answer from ${url.host} within ${formatSeconds(deadline.ms)}`);
  const code = (error as NodeJS.ErrnoException).code;
  return new ToolError(`fetching ${url.href} failed: ${code ?? (error as Error).message}`);
}

async function bodyToText(hop: Hop): Promise<{ text: string; kind: string }> {
  const type = String(hop.headers['content-type'] ?? '').toLowerCase();
  const charsetMatch = /charset=([^;]+)/.exec(type);
  const charset = (charsetMatch?.[1] ?? 'utf-8').trim().replace(/"/g, '');
  let decoded: string;
  try {
    decoded = new TextDecoder(charset).decode(hop.body);
  } catch {
    decoded = hop.body.toString('utf8');
  }
  const looksHtml = type.includes('html') || (!type && /^\s*<(!doctype html|html)/i.test(decoded));
  if (looksHtml) {
    // Loaded on first use: otherwise every pipe-mode start would load html-to-text and its parsers
    // (bench/pipe.mjs).
    const { convert: htmlToText } = await import('html-to-text');
    const text = htmlToText(decoded, {
      wordwrap: false,
      selectors: [
        { selector: 'img', format: 'skip' },
        { selector: 'script', format: 'skip' },
        { selector: 'style', format: 'skip' },
        { selector: 'nav', format: 'skip' },
        { selector: 'a', options: { ignoreHref: false, hideLinkHrefIfSameAsText: true } },
      ],
    });
    return { text, kind: 'html' };
  }
  const textual =
    type === '' || type.startsWith('text/') || /json|xml|javascript|yaml|toml|csv|x-sh/.test(type);
  if (!textual || hop.body.subarray(0, 8192).includes(0)) {
    return {
      text: `(binary content of type ${type || 'unknown'}, ${hop.body.length} bytes, not shown)`,
      kind: 'binary',
    };
  }
  return { text: decoded, kind: 'text' };
}

export const fetchUrlTool = defineTool<z.infer<typeof schema>>({
  name: 'fetch_url',
  description:
    'Fetch an http(s) URL and return its text (HTML is turned into readable text). Only allowed domains; private and loopback addresses are refused; at most 2 MiB downloaded and 32 KiB returned.',
  schema,
  readOnly: true,
  access: { kind: 'url' },
  async execute(args, context) {
    // One deadline for every hop and body, which holds under garbage collection (src/core/deadline.ts).
    const deadline = startDeadline(context.fetchTimeoutMs ?? FETCH_TIMEOUT_MS, context.signal);
    try {
      return await fetchUrl(args.url, context, deadline);
    } finally {
      deadline.clear();
    }
  },
});

/** Every hop of one fetch, redirects checked like the first request, within the deadline. */
async function fetchUrl(raw: string, context: ToolContext, deadline: Deadline): Promise<ToolOutput> {
  const allowed = context.config.policy.allowed_domains;
  const unrestricted = context.config.policy.mode === 'unrestricted';
  let url = checkUrl(raw);
  const firstHost = hostOf(url);
  const firstPort = portOf(url);
  const hops: string[] = [];
  for (let redirects = 0; ; redirects++) {
    let hop: Hop;
    try {
      hop = await request(url, context, deadline.signal);
    } catch (error) {
      throw describeNetworkError(error, url, deadline, context.signal);
    }
    const location = hop.headers.location;
    if (hop.status >= 300 && hop.status < 400 && location) {
      if (redirects >= MAX_REDIRECTS) throw new ToolError(`more than ${MAX_REDIRECTS} redirects from ${raw}`);
      const next = checkUrl(new URL(location, url).href);
      const nextHost = hostOf(next);
      // The policy judged the first host and port; a redirect elsewhere must be on the list itself.
      if (
        !unrestricted &&
        !(nextHost === firstHost && portOf(next) === firstPort) &&
        !listed(next, allowed)
      ) {
        throw new ToolError(
          `${url.href} redirects to ${next.href}, whose host ${nextHost} is not in policy.allowed_domains`,
        );
      }
      hops.push(`redirected ${hop.status} to ${next.href}`);
      url = next;
      continue;
    }
    const { text } = await bodyToText(hop);
    const header = [
      `URL: ${url.href}`,
      ...hops,
      `status: ${hop.status}`,
      `content-type: ${hop.headers['content-type'] ?? 'unknown'}`,
    ];
    if (hop.truncated) header.push(`[truncated: only the first ${FETCH_MAX_BYTES} bytes were downloaded]`);
    const body = capText(text, RESULT_CAP_BYTES - 1024, 'the page text');
    return { content: `${header.join('\n')}\n\n${body}`, isError: hop.status >= 400 };
  }
}
