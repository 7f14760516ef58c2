/**
 * Git origins on 127.0.0.1 for tests: bare repositories under one root served over smart HTTP
 * (`git http-backend` behind a Node server, optionally behind Basic auth), over dumb HTTP (static
 * files after `git update-server-info`), and over `git://` (`git daemon`). Every server also
 * answers `/page` with an HTML page, `/redirect?to=<url>` with a 302, and anything unknown with 404.
 */
import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join, normalize, sep } from 'node:path';
import { canConnect, freePort } from './ports.ts';

export interface OriginServer {
  /** `http://127.0.0.1:<port>` or `git://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** Request lines seen (`GET /x.git/info/refs?…`), for assertions. */
  readonly requests: string[];
  close(): Promise<void>;
}

export interface HttpOriginOptions {
  readonly mode?: 'smart' | 'dumb';
  readonly auth?: { readonly username: string; readonly password: string };
  /** Delay before answering each git request (to watch a slow fetch). */
  readonly delayMs?: number;
}

const gitEnv = (root: string) => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: root,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
});

export async function serveGitHttp(root: string, options: HttpOriginOptions = {}): Promise<OriginServer> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const url = new URL(req.url ?? '/', 'http://origin');
    if (url.pathname === '/page') {
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<!doctype html><title>Hello</title><p>Not git</p>');
      return;
    }
    if (url.pathname === '/redirect') {
      res.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end();
      return;
    }
    if (options.auth && !authorized(req, options.auth)) {
      res
        .writeHead(401, { 'www-authenticate': 'Basic realm="git"', 'content-type': 'text/plain' })
        .end('Unauthorized\n');
      return;
    }
    const answer = () =>
      options.mode === 'dumb' ? serveStatic(root, url, res) : httpBackend(root, url, req, res);
    if (options.delayMs) setTimeout(answer, options.delayMs);
    else answer();
  });
  return listen(server, requests);
}

function authorized(req: IncomingMessage, auth: { username: string; password: string }): boolean {
  const header = req.headers.authorization ?? '';
  const expected = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
  return header === expected;
}

async function serveStatic(root: string, url: URL, res: ServerResponse): Promise<void> {
  const path = normalize(join(root, decodeURIComponent(url.pathname)));
  if (!path.startsWith(root + sep)) return void res.writeHead(404).end();
  try {
    const info = await stat(path);
    if (!info.isFile()) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': info.size });
    createReadStream(path).pipe(res);
  } catch {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found\n');
  }
}

/** `git http-backend` as a CGI program. */
function httpBackend(root: string, url: URL, req: IncomingMessage, res: ServerResponse): void {
  const child = spawn('git', ['http-backend'], {
    env: {
      ...gitEnv(root),
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
      REQUEST_METHOD: req.method ?? 'GET',
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.replace(/^\?/, ''),
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      ...(req.headers['content-length'] ? { CONTENT_LENGTH: req.headers['content-length'] } : {}),
      ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] } : {}),
      ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
      REMOTE_ADDR: '127.0.0.1',
      REMOTE_USER: 'tester',
    },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  req.pipe(child.stdin);
  child.stdin.on('error', () => undefined);
  let head = Buffer.alloc(0);
  let started = false;
  child.stdout.on('data', (chunk: Buffer) => {
    if (started) {
      res.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) return;
    started = true;
    let status = 200;
    const headers: Record<string, string> = {};
    for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
      else headers[name] = value;
    }
    res.writeHead(status, headers);
    res.write(head.subarray(end + 4));
  });
  child.on('close', () => {
    if (!started) res.writeHead(500).end();
    else res.end();
  });
}

/** `git daemon` exporting every repository under `root`, on a free port of 127.0.0.1. */
export async function serveGitDaemon(root: string): Promise<OriginServer> {
  const port = await freePort();
  const child = spawn(
    'git',
    [
      'daemon',
      '--export-all',
      '--reuseaddr',
      `--base-path=${root}`,
      '--listen=127.0.0.1',
      `--port=${port}`,
      root,
    ],
    { env: gitEnv(root), stdio: 'ignore', detached: true },
  );
  for (let tries = 0; ; tries++) {
    if (await canConnect(port)) break;
    if (tries > 100) throw new Error('git daemon did not start');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `git://127.0.0.1:${port}`,
    port,
    requests: [],
    close: async () => {
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGTERM');
        } catch {
          // gone
        }
      }
      if (child.exitCode === null) await new Promise((resolve) => child.once('close', resolve));
    },
  };
}

async function listen(server: Server, requests: string[]): Promise<OriginServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Makes a bare repository servable over dumb HTTP (`info/refs`, `objects/info/packs`). */
export async function prepareDumb(repo: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn('git', ['update-server-info'], { cwd: repo, env: gitEnv(repo), stdio: 'ignore' });
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error('update-server-info failed'))));
  });
}
