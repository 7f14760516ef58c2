import { createServer, request } from 'node:http';
import { connect, createServer as createTcpServer, type Socket } from 'node:net';

export interface FlakyOrigin {
  /** `http://127.0.0.1:<port>`: the origin behind it, at the same paths. */
  readonly url: string;
  /** Request lines forwarded to the origin (`POST /x.git/git-upload-pack`), in order. */
  readonly forwarded: string[];
  /** Request lines answered 503 while the origin was away. */
  readonly refused: string[];
  /** While true every request is answered 503 (an origin gone away); false brings it back. */
  away: boolean;
  close(): Promise<void>;
}

/**
 * An HTTP origin that can go away and come back: a reverse proxy on 127.0.0.1 in front of
 * `targetUrl` that forwards every request while the origin is up and answers 503 while it is away.
 * `goAwayWhen` is asked before each request is forwarded (with the forwarded lines so far and this
 * one) and may take the origin away from that request on: a failure after the Nth of some request,
 * reproducible without timing.
 */
export async function flakyOrigin(
  targetUrl: string,
  goAwayWhen: (forwarded: readonly string[], line: string) => boolean = () => false,
): Promise<FlakyOrigin> {
  const target = new URL(targetUrl);
  const forwarded: string[] = [];
  const refused: string[] = [];
  const state = { away: false };
  const server = createServer((req, res) => {
    const line = `${req.method} ${req.url}`;
    if (!state.away && goAwayWhen(forwarded, line)) state.away = true;
    if (state.away) {
      refused.push(line);
      req.resume();
      res.writeHead(503, { 'content-type': 'text/plain' }).end('The origin is away\n');
      return;
    }
    forwarded.push(line);
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
        // A fresh connection per request: `hg serve` closes each one after its answer, and a kept-alive
        // socket reused after that fails at random (the client then sees a 502 from the guard).
        agent: false,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return withAwaySwitch(state, {
    url: `http://127.0.0.1:${port}`,
    forwarded,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

export interface FlakyTcpOrigin {
  /** The port on 127.0.0.1 the origin is reached at. */
  readonly port: number;
  /** Connections relayed to the origin so far. */
  readonly relayed: number;
  /** Connections closed at once while the origin was away. */
  readonly refused: number;
  /** While true every connection is closed as soon as it opens; false brings the origin back. */
  away: boolean;
  close(): Promise<void>;
}

/**
 * A TCP origin (svnserve, git daemon) that can go away and come back: a relay on 127.0.0.1 to
 * `targetPort` that closes each new connection at once while away. `goAwayWhen(relayed)` is asked
 * for each new connection (with how many were relayed before it).
 */
export async function flakyTcpOrigin(
  targetPort: number,
  goAwayWhen: (relayed: number) => boolean = () => false,
): Promise<FlakyTcpOrigin> {
  const state = { away: false, relayed: 0, refused: 0 };
  const sockets = new Set<Socket>();
  const server = createTcpServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    if (!state.away && goAwayWhen(state.relayed)) state.away = true;
    if (state.away) {
      state.refused += 1;
      client.destroy();
      return;
    }
    state.relayed += 1;
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return withAwaySwitch(state, {
    port: typeof address === 'object' && address ? address.port : 0,
    get relayed() {
      return state.relayed;
    },
    get refused() {
      return state.refused;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  });
}

/** `origin` with an `away` property that reads and writes `state.away`. */
function withAwaySwitch<T extends object>(state: { away: boolean }, origin: T): T & { away: boolean } {
  return Object.defineProperty(origin, 'away', {
    enumerable: true,
    get: () => state.away,
    set: (value: boolean) => {
      state.away = value;
    },
  }) as T & { away: boolean };
}
