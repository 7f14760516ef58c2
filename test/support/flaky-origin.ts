import { createServer, request } from 'node:http';

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
  return {
    url: `http://127.0.0.1:${port}`,
    forwarded,
    refused,
    get away() {
      return state.away;
    },
    set away(value: boolean) {
      state.away = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
