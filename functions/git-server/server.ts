/**
 * The Git front end: one Node HTTP server for the route table's `git-frontend` rows (Git smart
 * HTTP and the Git LFS API), in AWS a container service from the worker image behind the load
 * balancer, locally a server of its own that the local API Gateway forwards those paths to. Each
 * request goes path parameters → credentials (`authenticate`, as every route) → the handler's one
 * service call → the answer, with bodies streamed both ways, so memory does not grow with a pack or
 * an LFS object, but for an upload-pack negotiation, read whole (and bounded) before git starts
 * (`negotiation.ts`), so that a slow one costs a socket rather than a git process. The requests that
 * start git are bounded (`admission.ts`: so many at once per task, per client, and for anonymous
 * clients together), and so is the time a request body may take (`body-deadline.ts`, and Node's own
 * deadline on a whole request): docs/decisions.md, "Git front end limits".
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { authenticate, type Caller } from '#services/authenticate';
import { startPushLeases } from '#services/hosted-git';
import { inRequestFrom, requestOrigin } from '#services/request-scope';
import { config, type GitLimits, readGitLimits } from '#shared/config';
import { header } from '#shared/credentials';
import { HttpError, notFound } from '#shared/errors';
import { log, logUnhandled } from '#shared/log';
import { byPrecedence, type CompiledRoute, compile, matchRoute } from '#shared/route-match';
import { ROUTES, type Route, servedBy } from '#shared/routes';
import { publicUrls } from '#shared/urls';
import { pathParametersValid } from '#shared/validate';
import { type Admission, admission, signedInReserve } from './admission.ts';
import { watchBody } from './body-deadline.ts';
import { clientAddress, clientNetwork } from './client-address.ts';
import { GIT_HANDLERS, type GitHandler, STARTS_GIT } from './handlers.ts';
import { NEGOTIATION_LIMITS, type NegotiationReader, negotiationReader } from './negotiation.ts';
import { errorReply } from './replies.ts';
import type { GitReply } from './request.ts';

/** The load balancer's health check: answered without touching the table or the file system. */
export const HEALTH_PATH = '/_health';

/**
 * Longer than the load balancer's idle timeout (60 s by default), so the balancer, not the
 * server, closes idle keep-alive connections (a server that closes first makes it answer 502).
 */
const KEEP_ALIVE_MS = 65_000;
/** A connection with no bytes either way for this long is dead (git sends keepalives meanwhile). */
const IDLE_SOCKET_MS = 10 * 60_000;

export interface GitServerOptions {
  /** 0 picks a free port. */
  readonly port: number;
  /** `0.0.0.0` in the container; the local stack and tests use 127.0.0.1. */
  readonly host: string;
}

export interface GitServer {
  readonly url: string;
  readonly port: number;
  /**
   * Stops accepting connections; requests under way get `graceMs` to finish (ECS's SIGTERM),
   * then every connection is closed.
   */
  stop(graceMs?: number): Promise<void>;
}

/** The front end's rows of the route table, each with its handler; a row without one fails the start. */
export function frontEndRoutes(routes: readonly Route[] = ROUTES): CompiledRoute<GitHandler>[] {
  return routes
    .filter((route) => servedBy(route) === 'git-frontend')
    .map((route) => {
      const handler = GIT_HANDLERS[route.handler];
      if (!handler) throw new Error(`The Git front end has no handler for ${route.handler}`);
      return compile(route, handler);
    })
    .sort(byPrecedence);
}

/** Request headers as API Gateway hands them over (the client's spelling; the last of repeats). */
function headersOf(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i + 1 < request.rawHeaders.length; i += 2)
    headers[request.rawHeaders[i] ?? ''] = request.rawHeaders[i + 1] ?? '';
  return headers;
}

const contentLengthOf = (request: IncomingMessage): number | undefined => {
  const value = request.headers['content-length'];
  return value === undefined || request.headers['transfer-encoding'] ? undefined : Number(value);
};

/**
 * A body of up to this size is read and dropped before a refusal (as a lingering close would):
 * closing a connection with unread bytes makes the kernel reset it, and the client, or the load
 * balancer in front, may lose the answer with it. Git itself probes before a large push (a bare
 * flush packet, or \`Expect: 100-continue\`), so only other clients send more unasked.
 */
const DRAINED_BYTES = 1024 * 1024;

async function drainSmallBody(request: IncomingMessage): Promise<void> {
  const length = contentLengthOf(request);
  if (request.complete || length === undefined || length > DRAINED_BYTES) return;
  request.resume();
  await Promise.race([once(request, 'end'), delay(5000)]).catch(() => undefined);
}

/**
 * How long the rest of a large body a refusal did not read is read and dropped after the answer
 * (a lingering close, as web servers do): a client or load balancer that still sends gets the
 * answer whole instead of a reset, and one that stops sending is let go at once.
 */
const LINGER_MS = 2000;

function lingerAfter(request: IncomingMessage, response: ServerResponse): void {
  request.resume();
  response.once('finish', () => {
    if (request.complete) return;
    const timer = setTimeout(() => request.socket.destroy(), LINGER_MS);
    request.once('end', () => clearTimeout(timer));
    request.socket.once('close', () => clearTimeout(timer));
  });
}

async function send(request: IncomingMessage, response: ServerResponse, reply: GitReply): Promise<void> {
  if (reply.status >= 400) await drainSmallBody(request);
  // A refusal given before a large body was read lingers for the rest rather than close on it.
  if (reply.status >= 400 && !request.complete) lingerAfter(request, response);
  response.writeHead(reply.status, reply.headers);
  if (reply.body instanceof Readable) await pipeline(reply.body, response);
  else response.end(reply.body ?? '');
}

/**
 * Whose share of the git processes a request takes: the signed-in user or app, else the address
 * (for IPv6, its /64 network).
 */
function clientOf(caller: Caller, request: IncomingMessage): string {
  if (caller.kind === 'user') return `user:${caller.user.id}`;
  if (caller.kind === 'app') return `app:${caller.app.clientId}`;
  return `address:${clientNetwork(clientAddress(request))}`;
}

/** The handler whose body is a negotiation (`negotiation.ts`), read whole before git starts. */
const NEGOTIATES = 'git/upload-pack';

/** Git's answer when a bound of `admission.ts` is full (git prints the text as `remote: …`). */
const busy = (full: 'task' | 'client'): HttpError =>
  full === 'client'
    ? new HttpError(
        429,
        'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
        {
          headers: { 'Retry-After': '60' },
        },
      )
    : new HttpError(503, 'The Git service is busy. Please try again in a few minutes.', {
        headers: { 'Retry-After': '60' },
      });

interface Limits {
  readonly admission: Admission;
  readonly negotiation: NegotiationReader;
  readonly config: GitLimits;
}

async function serve(
  routes: readonly CompiledRoute<GitHandler>[],
  limits: Limits,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://localhost');
  if (url.pathname === HEALTH_PATH && request.method === 'GET')
    return send(request, response, { status: 200, headers: { 'Content-Type': 'text/plain' }, body: 'ok' });
  const matched = matchRoute(routes, request.method ?? 'GET', url.pathname);
  const route = matched?.compiled.route;
  const requestId = randomUUID();
  // What the request holds is let go once, when its response closes (sent, or the client gone).
  const onClose: (() => void)[] = [];
  response.on('close', () => {
    for (const release of onClose) release();
  });
  // The client hung up before the answer was out: stop git and anything else under way.
  const abort = new AbortController();
  onClose.push(() => {
    if (!response.writableFinished) abort.abort();
  });
  // A body that stops arriving ends the request, and the git process with it. The rest of the
  // body is read and dropped, so that closing the connection does not reset it under the 408.
  let late = false;
  const bodyLimits = {
    timeoutSeconds: limits.config.gitBodyTimeoutSeconds,
    minBytesPerSecond: limits.config.gitBodyMinBytesPerSecond,
  };
  onClose.push(
    watchBody(request, bodyLimits, () => {
      late = true;
      abort.abort();
      if (response.headersSent) return response.destroy();
      request.unpipe();
      request.resume();
      const reply = errorReply(route, 408, 'Request Timeout');
      response.writeHead(408, { ...reply.headers, Connection: 'close' });
      response.end(reply.body);
    }),
  );
  // One line per request, as an access log: the route's template, never the path or the query
  // (`?access_token=` may be there), and the outcome.
  const started = Date.now();
  onClose.push(() =>
    log('info', 'git request', {
      requestId,
      method: request.method,
      route: route?.path,
      status: response.statusCode,
      completed: response.writableFinished,
      durationMs: Date.now() - started,
    }),
  );
  try {
    if (!matched || !route || !pathParametersValid(route, matched.pathParameters)) throw notFound();
    const headers = headersOf(request);
    const query = Object.fromEntries(url.searchParams);
    const source = {
      headers,
      queryStringParameters: Object.keys(query).length > 0 ? query : null,
      pathParameters: matched.pathParameters,
    };
    const caller = await authenticate(source, route);
    // A negotiation is read whole before git starts: a slow one holds no git process.
    let body: Readable = request;
    let contentLength = contentLengthOf(request);
    if (route.handler === NEGOTIATES) {
      const negotiation = await limits.negotiation.read(request, abort.signal);
      onClose.push(negotiation.release);
      body = Readable.from([negotiation.body]);
      contentLength = negotiation.body.length;
    }
    if (STARTS_GIT.has(route.handler)) {
      const slot = limits.admission.admit(clientOf(caller, request), caller.kind !== 'anonymous');
      if (!slot.admitted) throw busy(slot.full);
      onClose.push(slot.release);
    }
    const reply = await matched.compiled.handler({
      route,
      params: matched.pathParameters,
      query,
      caller,
      urls: publicUrls(config(), source),
      header: (name) => header(source, name),
      body,
      contentLength,
      signal: abort.signal,
    });
    await send(request, response, reply);
  } catch (error) {
    if (late) return;
    if (response.headersSent || abort.signal.aborted) {
      // Mid-body: nothing can be said any more but a broken connection.
      if (!abort.signal.aborted) logUnhandled(route?.handler ?? 'git-server', requestId, error);
      response.destroy();
      return;
    }
    if (error instanceof HttpError)
      return send(request, response, errorReply(route, error.status, error.message, error.details.headers));
    logUnhandled(route?.handler ?? 'git-server', requestId, error);
    await send(request, response, errorReply(route, 500, 'Server Error'));
  }
}

/** Starts the Git front end on `host:port`, with its limits read here; the rest of the configuration is read as the handlers read it. */
export async function startGitServer(options: GitServerOptions): Promise<GitServer> {
  const routes = frontEndRoutes();
  const settings = readGitLimits();
  const limits: Limits = {
    admission: admission({
      total: settings.gitMaxProcesses,
      perClient: settings.gitMaxProcessesPerClient,
      reservedForSignedIn: signedInReserve(settings.gitMaxProcesses),
    }),
    negotiation: negotiationReader(NEGOTIATION_LIMITS, () => busy('task')),
    config: settings,
  };
  // Before the first push: what a task killed before this one left is removed first.
  const leases = await startPushLeases();
  const server = createServer((request, response) => {
    // The security log's address and user agent, as a route function's per-route middleware sets them.
    const origin = requestOrigin(clientAddress(request), request.headers['user-agent']);
    inRequestFrom(origin, () => serve(routes, limits, request, response)).catch((error: unknown) => {
      logUnhandled('git-server', undefined, error);
      response.destroy();
    });
  });
  // Node's 5-minute default would cut a large push short; an hour lets 2 GiB through at 0.6 MB/s.
  server.requestTimeout = settings.gitRequestTimeoutSeconds * 1000;
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.headersTimeout = Math.min(KEEP_ALIVE_MS + 1000, server.requestTimeout);
  server.setTimeout(IDLE_SOCKET_MS, (socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`,
    port,
    stop: (graceMs = 0) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        server.close(() => {
          clearTimeout(timer);
          // The pushes under way have settled their quarantines (or left them named in the lease).
          void leases.stop().then(resolve);
        });
        server.closeIdleConnections();
        if (graceMs === 0) server.closeAllConnections();
      }),
  };
}
