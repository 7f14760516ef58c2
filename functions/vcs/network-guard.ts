/**
 * The network guard: every connection the importer makes to an origin goes through here. A host
 * name is resolved once, every address in the answer is checked with `isForbiddenAddress` (one
 * forbidden address refuses the whole answer, so a name cannot smuggle a private address in next
 * to a public one), and the connection is made to that very address, so DNS rebinding between the
 * check and the connect does not help. Redirects are re-checked the same way.
 *
 * Node's own probes use `guardedRequest`. Git's transports cannot take our resolver, so git talks
 * to the origin only through `startGuardProxy`: a proxy on 127.0.0.1 that applies the same guard
 * to every CONNECT (https, and `git://` through the tunnel program) and every absolute-URI request
 * (http), and dials only addresses it checked.
 */
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
  type ServerResponse,
} from 'node:http';
import { isIP, connect as netConnect, type Socket } from 'node:net';
import { rootCertificates, TLSSocket, connect as tlsConnect } from 'node:tls';
import { bareHost, checkedAddresses, type Resolver } from './address-check.ts';
import { ForbiddenAddress, OriginFailed } from './origin.ts';
import { isPinnedTarget, type PinnedOrigin, portOf, redirectAway } from './pinned-origin.ts';

export interface DialTarget {
  /** The checked IP address: the only thing a dialer may connect to. */
  readonly address: string;
  readonly port: number;
  /** The name the address was resolved from (for logs and TLS, never for resolving again). */
  readonly host: string;
}

/** Opens a TCP connection to a checked address. */
export type Dialer = (target: DialTarget, timeoutMs: number) => Promise<Socket>;

export { checkedAddresses, type Resolver, systemResolver } from './address-check.ts';

export interface Guard {
  /** Addresses allowed although private or loopback (config `ORIGIN_ALLOWED_ADDRESSES`). */
  readonly allowedAddresses: readonly string[];
  readonly resolve?: Resolver;
  readonly dial?: Dialer;
  /** Connect timeout per address (default 15 s). */
  readonly connectTimeoutMs?: number;
}

export const tcpDialer: Dialer = (target, timeoutMs) =>
  new Promise((resolve, reject) => {
    // Half-open allowed: an origin that ends its side may still be sent the rest (the tunnel's contract).
    const socket = netConnect({ host: target.address, port: target.port, allowHalfOpen: true });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new OriginFailed(`Connecting to ${target.host} timed out`));
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      resolve(socket);
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });

/** Node's HTTP client must never resolve a name itself: only the guard does. */
const noLookup = (): never => {
  throw new Error('the network guard resolves names, not the HTTP client');
};

/** Connects to a checked address of `host` (the first that answers), never resolving twice. */
export async function guardedConnect(
  host: string,
  port: number,
  guard: Guard,
): Promise<{ readonly socket: Socket; readonly address: string }> {
  const addresses = await checkedAddresses(host, guard);
  const dial = guard.dial ?? tcpDialer;
  let lastError: unknown;
  for (const address of addresses) {
    try {
      const socket = await dial({ address, port, host: bareHost(host) }, guard.connectTimeoutMs ?? 15_000);
      return { socket, address };
    } catch (error) {
      lastError = error;
    }
  }
  if (lastError instanceof OriginFailed) throw lastError;
  throw new OriginFailed(`The host ${bareHost(host)} is unreachable`);
}

export interface GuardedRequest {
  readonly method?: 'GET' | 'HEAD' | 'OPTIONS' | 'POST';
  readonly headers?: Readonly<Record<string, string>>;
  /** A small request body (Subversion's `OPTIONS` probe, a webhook's payload), sent again to each redirect. */
  readonly body?: string;
  /** Whole request, redirects included (default 20 s). */
  readonly timeoutMs?: number;
  /** Largest body kept; the rest is not read (default 1 MiB). */
  readonly maxBytes?: number;
  /** Default 5. */
  readonly maxRedirects?: number;
  /** A redirect leaving the URL's origin (scheme, host, port) is returned, not followed. */
  readonly sameOriginOnly?: boolean;
  /** `false`: every redirect is returned as the answer, never followed (webhook deliveries). */
  readonly followRedirects?: false;
  /**
   * `false`: https without verifying the certificate (a webhook with `insecure_ssl: "1"`). The
   * address is still resolved once, checked and dialled as always; only the certificate is not.
   */
  readonly verifyCertificate?: false;
}

export interface GuardedResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** The body was longer than `maxBytes`. */
  readonly truncated: boolean;
  /** The URL that answered, after redirects. */
  readonly url: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * An HTTP(S) request through the guard: each hop (the URL and every redirect, followed by hand)
 * is resolved once, checked and dialled by address; TLS verifies the original host name. The
 * `Authorization` header is dropped when a redirect leaves the origin (as curl does).
 */
export async function guardedRequest(
  url: string,
  guard: Guard,
  options: GuardedRequest = {},
): Promise<GuardedResponse> {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  const maxRedirects = options.maxRedirects ?? 5;
  let current = new URL(url);
  let headers: Record<string, string> = { ...options.headers };
  for (let hop = 0; ; hop++) {
    if (current.protocol !== 'http:' && current.protocol !== 'https:')
      throw new OriginFailed('The origin redirected to a URL that is not http or https');
    const response = await requestOnce(current, guard, headers, options, deadline);
    const location = response.headers.location;
    if (!REDIRECTS.has(response.status) || location === undefined || options.followRedirects === false)
      return response;
    if (options.sameOriginOnly && redirectAway(current, location)) return response;
    if (hop >= maxRedirects) throw new OriginFailed('The origin redirected too many times');
    const next = new URL(location, current);
    if (next.origin !== current.origin) {
      const { authorization: _dropped, ...rest } = Object.fromEntries(
        Object.entries(headers).map(([key, value]) => [key.toLowerCase(), value]),
      );
      headers = rest;
    }
    current = next;
  }
}

async function requestOnce(
  url: URL,
  guard: Guard,
  headers: Readonly<Record<string, string>>,
  options: GuardedRequest,
  deadline: number,
): Promise<GuardedResponse> {
  const secure = url.protocol === 'https:';
  const port = url.port === '' ? (secure ? 443 : 80) : Number(url.port);
  const { socket: tcp } = await guardedConnect(url.hostname, port, guard);
  const socket = secure
    ? await startTls(tcp, bareHost(url.hostname), options.verifyCertificate !== false)
    : tcp;
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  return new Promise((resolve, reject) => {
    const remaining = deadline - Date.now();
    const timer = setTimeout(
      () => {
        socket.destroy();
        reject(new OriginFailed(`The origin at ${url.host} did not answer in time`));
      },
      Math.max(remaining, 1),
    );
    const req = request(
      {
        method: options.method ?? 'GET',
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
        // No agent (an agent, even `agent: false`, resolves and dials by itself); the socket is ours.
        createConnection: () => socket,
        lookup: noLookup,
      },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        const finish = () => {
          clearTimeout(timer);
          socket.destroy();
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
            truncated,
            url: url.toString(),
          });
        };
        res.on('data', (chunk: Buffer) => {
          if (truncated) return;
          const room = maxBytes - size;
          if (chunk.length > room) {
            chunks.push(chunk.subarray(0, room));
            size = maxBytes;
            truncated = true;
            finish();
            return;
          }
          chunks.push(chunk);
          size += chunk.length;
        });
        res.on('end', () => {
          if (!truncated) finish();
        });
        res.on('error', () => {
          if (!truncated) finish();
        });
      },
    );
    req.on('error', () => {
      clearTimeout(timer);
      socket.destroy();
      reject(new OriginFailed(`The origin at ${url.host} closed the connection`));
    });
    req.end(options.body);
  });
}

/**
 * TLS over a guarded socket, verifying `host` (the name the address was resolved from), or, with
 * `verify` false, accepting whatever certificate the peer shows.
 */
export function startTls(socket: Socket, host: string, verify = true): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const secure = tlsConnect({
      socket,
      servername: isIP(host) === 0 ? host : undefined,
      // The name the certificate must carry: without it Node checks against "localhost", and an
      // origin named by its address (https://192.0.2.7/) never matched its own certificate.
      host,
      ALPNProtocols: ['http/1.1'],
      rejectUnauthorized: verify,
    });
    secure.once('secureConnect', () => resolve(secure));
    secure.once('error', (error) => {
      socket.destroy();
      reject(new OriginFailed(`TLS with ${host} failed: ${error.message}`));
    });
  });
}

/** What the proxy refused, so a failed tool call can say why. */
export interface Refusal {
  readonly host: string;
  readonly port: number;
  /**
   * `off_origin`: a target other than the pinned origin; `redirect`: a redirect leaving the pinned
   * origin (not passed on); `idle`: the origin sent nothing for `idleTimeoutMs` (connection closed).
   */
  readonly reason: 'forbidden' | 'unreachable' | 'bad_request' | 'off_origin' | 'redirect' | 'idle';
  readonly address?: string;
  /** `redirect`: where it pointed, without credentials. */
  readonly location?: string;
}

export interface GuardProxy {
  /** `http://127.0.0.1:<port>`: git's `http.proxy`. */
  readonly url: string;
  readonly port: number;
  /** Targets refused so far (a forbidden address is refused with 403 before any packet). */
  readonly refusals: readonly Refusal[];
  /** Connections dialled so far, each to a checked address. */
  readonly dialled: readonly DialTarget[];
  close(): Promise<void>;
}

export interface GuardProxyOptions {
  /**
   * Only this origin may be reached: any other CONNECT or request is refused (403, `off_origin`),
   * and a redirect that leaves it is answered 502 instead (`redirect`), so the tool never follows it.
   */
  readonly pin?: PinnedOrigin;
  /** An origin connection idle this long is closed (`idle`). Default: none. */
  readonly idleTimeoutMs?: number;
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'upgrade',
]);

const withoutHopByHop = (headers: IncomingHttpHeaders) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase())));

/** A URL as a refusal may record it: no credentials. */
const shownUrl = (url: URL): string => {
  const shown = new URL(url.href);
  shown.username = '';
  shown.password = '';
  return shown.href;
};

class IdleOrigin extends Error {}

/**
 * Starts the guard proxy on 127.0.0.1 (a random port) for the duration of one job's tool calls.
 * CONNECT (https through curl, `git://` and `svn://` through the tunnel program) and absolute-URI
 * requests (http) are resolved, checked and dialled by address; anything refused gets 403
 * (forbidden) or 502 (unreachable) and is recorded in `refusals`. Nothing is forwarded that was
 * not checked. With `pin`, see `GuardProxyOptions`; a pinned https origin is intercepted
 * (`pinned-origin.ts`) so its redirects are seen as well.
 */
export async function startGuardProxy(guard: Guard, options: GuardProxyOptions = {}): Promise<GuardProxy> {
  const { pin, idleTimeoutMs } = options;
  const refusals: Refusal[] = [];
  const dialled: DialTarget[] = [];
  const open = new Set<Socket>();
  const track = (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  };

  const connectChecked = async (host: string, port: number): Promise<Socket> => {
    try {
      const { socket, address } = await guardedConnect(host, port, guard);
      dialled.push({ address, port, host: bareHost(host) });
      track(socket);
      if (idleTimeoutMs !== undefined)
        socket.setTimeout(idleTimeoutMs, () => {
          refusals.push({ host, port, reason: 'idle' });
          socket.destroy(new IdleOrigin());
        });
      return socket;
    } catch (error) {
      refusals.push(
        error instanceof ForbiddenAddress
          ? { host, port, reason: 'forbidden', address: error.address }
          : { host, port, reason: 'unreachable' },
      );
      throw error;
    }
  };
  const statusFor = (error: unknown) => (error instanceof ForbiddenAddress ? 403 : 502);
  const offOrigin = (host: string, port: number, protocol: string) => {
    if (!pin) return false;
    if (isPinnedTarget(pin, host, port) && protocol === pin.protocol) return false;
    refusals.push({ host, port, reason: 'off_origin' });
    return true;
  };

  /** One request to `target` over `upstream`; with a pin, a redirect leaving the origin is not passed on. */
  const forward = (req: IncomingMessage, res: ServerResponse, target: URL, upstream: Socket) => {
    const port = portOf(target);
    const outgoing = request(
      {
        method: req.method,
        host: bareHost(target.hostname),
        port,
        path: `${target.pathname}${target.search}`,
        headers: { ...withoutHopByHop(req.headers), host: target.host, connection: 'close' },
        createConnection: () => upstream,
        lookup: noLookup,
      },
      (answer) => {
        const location = answer.headers.location;
        const away =
          pin && REDIRECTS.has(answer.statusCode ?? 0) && location !== undefined
            ? redirectAway(target, location)
            : undefined;
        if (away) {
          refusals.push({
            host: away.hostname,
            port: portOf(away),
            reason: 'redirect',
            location: shownUrl(away),
          });
          answer.destroy();
          upstream.destroy();
          res
            .writeHead(502, { 'content-type': 'text/plain', connection: 'close' })
            .end('The import guard refused a redirect that leaves the origin\n');
          return;
        }
        res.writeHead(answer.statusCode ?? 502, withoutHopByHop(answer.headers));
        answer.pipe(res);
      },
    );
    outgoing.on('error', () => {
      upstream.destroy();
      if (!res.headersSent) res.writeHead(502, { connection: 'close' });
      res.end();
    });
    req.pipe(outgoing);
  };

  const server = createServer((req, res) => {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      target = new URL('invalid:');
    }
    if (target.protocol !== 'http:' || target.hostname === '') {
      refusals.push({ host: '', port: 0, reason: 'bad_request' });
      res
        .writeHead(400, { 'content-type': 'text/plain', connection: 'close' })
        .end('Only absolute http URLs\n');
      return;
    }
    const port = portOf(target);
    if (offOrigin(target.hostname, port, 'http:')) {
      res.writeHead(403, { 'content-type': 'text/plain', connection: 'close' }).end('Not the origin\n');
      return;
    }
    connectChecked(target.hostname, port).then(
      (socket) => forward(req, res, target, socket),
      (error: unknown) => {
        res
          .writeHead(statusFor(error), { 'content-type': 'text/plain', connection: 'close' })
          .end(`${error instanceof Error ? error.message : 'Refused'}\n`);
      },
    );
  });

  // The pinned https origin, seen from inside: requests arrive here decrypted (origin-form paths),
  // each goes out over the proxy's own verified TLS.
  const intercepted = createServer((req, res) => {
    const path = req.url ?? '';
    if (!pin?.interception || !path.startsWith('/')) {
      refusals.push({ host: '', port: 0, reason: 'bad_request' });
      res
        .writeHead(400, { 'content-type': 'text/plain', connection: 'close' })
        .end('Only origin-form paths\n');
      return;
    }
    const target = new URL(
      `https://${pin.host.includes(':') ? `[${pin.host}]` : pin.host}:${pin.port}${path}`,
    );
    connectChecked(pin.host, pin.port)
      .then((tcp) => originTls(tcp, pin.host, pin.interception?.extraCa))
      .then(
        (socket) => forward(req, res, target, socket),
        () => {
          res.writeHead(502, { 'content-type': 'text/plain', connection: 'close' }).end('TLS failed\n');
        },
      );
  });

  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    track(client);
    client.on('error', () => client.destroy());
    const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(req.url ?? '');
    const port = Number(match?.[2]);
    if (!match?.[1] || !(port > 0 && port < 65536)) {
      refusals.push({ host: '', port: 0, reason: 'bad_request' });
      client.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
      return;
    }
    const host = match[1];
    // A pinned http origin is never reached by CONNECT; https only when it can be intercepted.
    if (offOrigin(host, port, pin?.protocol === 'http:' ? 'connect' : (pin?.protocol ?? ''))) {
      client.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n');
      return;
    }
    if (pin?.protocol === 'https:') {
      if (!pin.interception) {
        refusals.push({ host, port, reason: 'off_origin' });
        client.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n');
        return;
      }
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) client.unshift(head);
      const secure = new TLSSocket(client, {
        isServer: true,
        key: pin.interception.key,
        cert: pin.interception.cert,
        ALPNProtocols: ['http/1.1'],
      });
      secure.on('error', () => client.destroy());
      intercepted.emit('connection', secure);
      return;
    }
    connectChecked(host, port).then(
      (upstream) => {
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length > 0) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      },
      (error: unknown) => {
        const status = statusFor(error);
        client.end(
          `HTTP/1.1 ${status} ${status === 403 ? 'Forbidden' : 'Bad Gateway'}\r\nConnection: close\r\n\r\n`,
        );
      },
    );
  });
  server.on('connection', track);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    refusals,
    dialled,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        intercepted.close();
        server.close(() => resolve());
      }),
  };
}

/** The proxy's own TLS to an intercepted origin: the system's CAs (and a test's), the origin's name. */
function originTls(socket: Socket, host: string, extraCa: readonly string[] = []): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const secure = tlsConnect({
      socket,
      servername: isIP(host) === 0 ? host : undefined,
      host,
      ca: [...rootCertificates, ...extraCa],
      ALPNProtocols: ['http/1.1'],
    });
    secure.once('secureConnect', () => resolve(secure));
    secure.once('error', (error) => {
      socket.destroy();
      reject(error);
    });
  });
}

/**
 * The tunnel program of `git://` and `svn+guard://`. git runs `core.gitProxy` as
 * `<program> <host> <port>`, svn runs a `[tunnels]` agent as `<program> <[user@]host[:port]>
 * svnserve -t`; either way the connection is the program's stdin/stdout. It asks the guard proxy
 * (`IMPORT_GUARD_PROXY`, host:port) to CONNECT and copies bytes both ways, each direction ended on
 * its own (half-close), and exits once both are done and everything read was written out: it
 * never resolves or dials the origin itself.
 */
export const TUNNEL_PROGRAM = (nodePath: string): string => `#!${nodePath}
import { closeSync, writeSync } from 'node:fs';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
// fd 2 is the tool's own stderr (svn and git hand theirs to the tunnel): one open file, shared.
// Node's process.stderr would make it non-blocking for the tool too, and the tool's next write to
// a full stderr would fail with EAGAIN (svnrdump then exits 1, its error line lost the same way).
// Whatever writes to process.stderr here (this program, Node's warnings) writes to fd 2 as it is.
const stderr = new Writable({
  write(chunk, _encoding, done) {
    try {
      writeSync(2, chunk);
    } catch {
      // nobody reads it
    }
    done();
  },
});
Object.defineProperty(process, 'stderr', { value: stderr, configurable: true });
const args = process.argv.slice(2);
let host = args[0] ?? '';
let port = args[1] ?? '';
if (args[1] === 'svnserve') {
  const match = /^(?:.*@)?(\\[[^\\]]+\\]|[^:@]+)(?::(\\d+))?$/.exec(host);
  host = (match?.[1] ?? '').replace(/^\\[|\\]$/g, '');
  port = match?.[2] ?? '3690';
}
// fd 1 through Node's stdout (an fs stream on it fails with EAGAIN once the pipe is non-blocking).
// A write's callback runs once it and every write before it are in the pipe: \`flushed\` waits for
// that. When the origin has sent all it will, fd 1 is closed, so the tool sees the end.
const out = process.stdout;
out.on('error', () => process.exit(1));
let outClosed = false;
const flushed = (then) => (outClosed ? then() : out.write('', then));
const fail = (message) => {
  process.stderr.write(\`fatal: import guard: \${message}\\n\`);
  process.exit(1);
};
if (!host || !/^\\d+$/.test(port)) fail('bad target');
const [proxyHost, proxyPort] = (process.env.IMPORT_GUARD_PROXY ?? '').split(':');
const socket = connect({ host: proxyHost, port: Number(proxyPort), allowHalfOpen: true });
const target = host.includes(':') ? \`[\${host}]:\${port}\` : \`\${host}:\${port}\`;
socket.write(\`CONNECT \${target} HTTP/1.1\\r\\nHost: \${target}\\r\\n\\r\\n\`);
let head = Buffer.alloc(0);
let received = false;
const onData = (chunk) => {
  head = Buffer.concat([head, chunk]);
  const end = head.indexOf('\\r\\n\\r\\n');
  if (end < 0) return;
  socket.off('data', onData);
  const status = head.subarray(0, head.indexOf('\\r\\n')).toString();
  if (!/^HTTP\\/1\\.[01] 200/.test(status)) fail(\`refused \${target}: \${status}\`);
  const rest = head.subarray(end + 4);
  if (rest.length > 0) out.write(rest);
  socket.pipe(out, { end: false });
  socket.on('end', () => {
    received = true;
    flushed(() => {
      outClosed = true;
      closeSync(1);
    });
  });
  process.stdin.pipe(socket);
};
socket.on('data', onData);
socket.on('error', (error) => fail(error.message));
// Both directions are done (or the proxy dropped the connection): exit once fd 1 is flushed.
socket.on('close', () => flushed(() => process.exit(received ? 0 : 1)));
`;

/** The same program: git's name for it. */
export const GIT_TUNNEL_PROGRAM = TUNNEL_PROGRAM;
