/**
 * A streamed HTTP(S) request through the network guard, for what `guardedRequest` cannot carry: a
 * JSON `POST` (the Git LFS batch API) and a response body too large to hold in memory (an LFS
 * object). Each hop is resolved once, checked and dialled by address (`guardedConnect`); redirects
 * are followed by hand through the guard, and `Authorization` is dropped when one leaves the
 * URL's origin (scheme, host, port).
 */
import { type IncomingMessage, request } from 'node:http';
import { type Guard, guardedConnect, startTls } from './network-guard.ts';
import { OriginFailed } from './origin.ts';

export interface StreamRequest {
  readonly method: 'GET' | 'POST';
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  /** The answer may send nothing this long before the request fails. */
  readonly idleTimeoutMs: number;
  /** Redirects followed (0 for the batch API: a `POST` is not redirected). */
  readonly maxRedirects: number;
}

export interface StreamResponse {
  readonly status: number;
  /** Unread: the caller consumes or destroys it. */
  readonly body: IncomingMessage;
  readonly url: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

const bareHost = (host: string): string => host.replace(/^\[|\]$/g, '');

/** Fails (`OriginFailed`) on a URL that is not http(s); `ForbiddenAddress` before any packet to a forbidden address. */
export async function guardedStream(
  url: string,
  guard: Guard,
  options: StreamRequest,
): Promise<StreamResponse> {
  let current = new URL(url);
  let headers: Record<string, string> = { ...options.headers };
  for (let hop = 0; ; hop++) {
    if (current.protocol !== 'http:' && current.protocol !== 'https:')
      throw new OriginFailed('The Git LFS server pointed to a URL that is not http or https');
    const response = await once(current, guard, headers, options);
    const location = response.body.headers.location;
    if (!REDIRECTS.has(response.status) || location === undefined || options.maxRedirects === 0)
      return response;
    response.body.destroy();
    if (hop >= options.maxRedirects) throw new OriginFailed('The Git LFS server redirected too many times');
    const next = new URL(location, current);
    if (next.origin !== current.origin)
      headers = Object.fromEntries(
        Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'authorization'),
      );
    current = next;
  }
}

async function once(
  url: URL,
  guard: Guard,
  headers: Readonly<Record<string, string>>,
  options: StreamRequest,
): Promise<StreamResponse> {
  const secure = url.protocol === 'https:';
  const port = url.port === '' ? (secure ? 443 : 80) : Number(url.port);
  const { socket: tcp } = await guardedConnect(url.hostname, port, guard);
  const socket = secure ? await startTls(tcp, bareHost(url.hostname)) : tcp;
  socket.setTimeout(options.idleTimeoutMs, () =>
    socket.destroy(new OriginFailed(`The Git LFS server at ${url.host} sent nothing for too long`)),
  );
  return new Promise((resolve, reject) => {
    const req = request(
      {
        method: options.method,
        host: bareHost(url.hostname),
        port,
        path: `${url.pathname}${url.search}`,
        headers: {
          ...headers,
          host: url.host,
          connection: 'close',
          ...(options.body !== undefined
            ? { 'content-length': String(Buffer.byteLength(options.body)) }
            : {}),
        },
        // The socket is the guard's: no agent, and the HTTP client never resolves a name itself.
        createConnection: () => socket,
        lookup: () => {
          throw new Error('the network guard resolves names, not the HTTP client');
        },
      },
      (res) => resolve({ status: res.statusCode ?? 0, body: res, url: url.toString() }),
    );
    req.on('error', (error) => {
      socket.destroy();
      reject(
        error instanceof OriginFailed
          ? error
          : new OriginFailed(`The Git LFS server at ${url.host} closed the connection`),
      );
    });
    req.end(options.body);
  });
}

/** The whole body, at most `maxBytes` (more fails: a batch answer is small). */
export async function readBounded(body: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      body.destroy();
      throw new OriginFailed('The Git LFS server answered with too much data');
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
