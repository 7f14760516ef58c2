/**
 * Mercurial origins on 127.0.0.1 for tests: `hg serve` for one repository or an hgweb index of
 * several (a `[paths]` web config), optionally behind a Node proxy that wants Basic auth, and a
 * small repository with named branches, a bookmark, tags and authors (one without an email).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server as HttpServer, type IncomingHttpHeaders, request } from 'node:http';
import { createServer as createTcpServer, type Socket, type Server as TcpServer } from 'node:net';
import { dirname, join } from 'node:path';
import { copyOfFixture } from './fixture-cache.ts';
import type { OriginServer } from './git-origins.ts';
import { canConnect, freePort } from './ports.ts';

const hgEnv = (home: string) => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: home,
  HGRCPATH: '',
  HGPLAIN: '1',
  HGENCODING: 'utf-8',
  LC_ALL: 'C',
});

function hg(cwd: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('hg', args, { cwd, env: hgEnv(cwd), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`hg ${args[0]}: ${err}`))));
  });
}

export const HG_FIXTURE_USERS = {
  ada: 'Ada Lovelace <ada@example.com>',
  bob: 'bob',
  carl: 'Carl Gauß <carl@example.org>',
} as const;

/**
 * Revisions: 0 (ada, default) a.txt; 1 (bob, stable) b.txt; 2 (carl, default) a.txt changed;
 * 3 (bob, default) tag v1.0 on rev 0, bookmark `feature` there; 4 (ada, stable) b.txt changed;
 * with `largeFile`, 5 (carl, default) adds that many bytes at that path.
 */
export async function makeHgFixture(
  repo: string,
  options: { readonly largeFile?: { readonly path: string; readonly bytes: number } } = {},
): Promise<void> {
  // Revisions 0-4 are the same bytes every time (fixed dates): built once, copied (fixture-cache.ts).
  await copyOfFixture('hg-fixture', makeHgFixtureBase, repo);
  if (options.largeFile) {
    const run = (...args: string[]) => hg(repo, args);
    const path = join(repo, options.largeFile.path);
    await mkdir(dirname(path), { recursive: true });
    // Not compressible, like the media files that are large in practice.
    await writeFile(path, randomBytes(options.largeFile.bytes));
    await run('add', options.largeFile.path);
    await run('commit', '-m', 'five', '-u', HG_FIXTURE_USERS.carl, '-d', '1700000500 0');
  }
}

async function makeHgFixtureBase(repo: string): Promise<void> {
  await mkdir(repo, { recursive: true });
  const run = (...args: string[]) => hg(repo, args);
  await run('init');
  await writeFile(join(repo, 'a.txt'), 'one\n');
  await run('add', 'a.txt');
  await run('commit', '-m', 'one', '-u', HG_FIXTURE_USERS.ada, '-d', '1700000000 0');
  await run('branch', 'stable');
  await writeFile(join(repo, 'b.txt'), 'stable\n');
  await run('add', 'b.txt');
  await run('commit', '-m', 'two', '-u', HG_FIXTURE_USERS.bob, '-d', '1700000100 0');
  await run('update', 'default');
  await writeFile(join(repo, 'a.txt'), 'one\nthree\n');
  await run('commit', '-m', 'three', '-u', HG_FIXTURE_USERS.carl, '-d', '1700000200 0');
  await run('tag', '-u', HG_FIXTURE_USERS.bob, '-d', '1700000300 0', '-r', '0', 'v1.0');
  await run('bookmark', '-r', '2', 'feature');
  await run('update', 'stable');
  await writeFile(join(repo, 'b.txt'), 'stable\nfour\n');
  await run('commit', '-m', 'four', '-u', HG_FIXTURE_USERS.ada, '-d', '1700000400 0');
  await run('update', 'default');
}

/**
 * A repository of `revisions` changesets, each adding one file (`nf<rev>`), the last
 * `branchRevisions` of them on the named branch `stable`: `hg debugbuilddag`, one process, a few
 * seconds for thousands of changesets (`hg commit` would take one process each).
 */
export async function makeHgBulkRepository(
  repo: string,
  options: { readonly revisions: number; readonly branchRevisions?: number },
): Promise<void> {
  const onStable = options.branchRevisions ?? 0;
  await mkdir(repo, { recursive: true });
  await hg(repo, ['init']);
  const dag = `+${options.revisions - onStable}${onStable > 0 ? ` @stable +${onStable}` : ''}`;
  await hg(repo, ['debugbuilddag', '--new-file', '--from-existing', dag]);
}

/**
 * `hg serve` of one repository, or (with several) of an hgweb index of every repository under
 * `root`; `config` is extra `section.name=value` settings (`extensions.clonebundles=`).
 */
export async function serveHg(
  target: { repo: string } | { root: string },
  config: readonly string[] = [],
): Promise<OriginServer> {
  const port = await freePort();
  const cwd = 'repo' in target ? target.repo : target.root;
  const args = [
    'serve',
    '-a',
    '127.0.0.1',
    '-p',
    String(port),
    ...config.flatMap((entry) => ['--config', entry]),
  ];
  if ('root' in target) {
    await writeFile(join(target.root, 'hgweb.config'), `[paths]\n/ = ${target.root}/*\n`);
    args.push('--web-conf', join(target.root, 'hgweb.config'));
  }
  const child = spawn('hg', args, { cwd, env: hgEnv(cwd), stdio: 'ignore', detached: true });
  for (let tries = 0; ; tries++) {
    if (await canConnect(port)) break;
    if (tries > 200) throw new Error('hg serve did not start');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // hgweb loads its wire-protocol modules lazily on the first request, and two first requests at
  // once race there (one fails with a 500): one request before anybody else sends any.
  await fetch(`http://127.0.0.1:${port}/?cmd=capabilities`)
    .then((answer) => answer.arrayBuffer())
    .catch(() => undefined);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests: [],
    close: async () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
      } catch {
        // gone
      }
      if (child.exitCode === null) await new Promise((resolve) => child.once('close', resolve));
    },
  };
}

/** A proxy in front of `upstream` that answers 401 unless the request carries the Basic credentials. */
export const basicAuthProxy = (
  upstream: OriginServer,
  auth: { readonly username: string; readonly password: string },
): Promise<OriginServer> => hgFront(upstream, { auth });

export interface HgFrontOptions {
  /** Answer 401 unless the request carries these Basic credentials. */
  readonly auth?: { readonly username: string; readonly password: string };
  /** Wait this long before answering each request (a slow origin). */
  readonly delayMs?: number;
  /** A redirect (status and `Location`) for a request path, or undefined to forward it. */
  readonly redirect?: (path: string) => { readonly status: number; readonly location: string } | undefined;
}

/**
 * A Node HTTP server in front of `upstream` (`hg serve`): optionally wants Basic auth, answers
 * slowly or redirects; everything else is forwarded. `requests` holds `METHOD path` lines,
 * `headers` every request's headers.
 */
export async function hgFront(
  upstream: OriginServer,
  options: HgFrontOptions,
): Promise<OriginServer & { readonly headers: IncomingHttpHeaders[] }> {
  const requests: string[] = [];
  const headers: IncomingHttpHeaders[] = [];
  const expected = options.auth
    ? `Basic ${Buffer.from(`${options.auth.username}:${options.auth.password}`).toString('base64')}`
    : undefined;
  const server = createServer(async (req, res) => {
    requests.push(`${req.method} ${req.url}`);
    headers.push(req.headers);
    if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
    if (expected !== undefined && req.headers.authorization !== expected) {
      res
        .writeHead(401, { 'www-authenticate': 'Basic realm="hg"', 'content-type': 'text/plain' })
        .end('Unauthorized\n');
      return;
    }
    const redirect = options.redirect?.(req.url ?? '/');
    if (redirect) {
      res.writeHead(redirect.status, { location: redirect.location, 'content-length': '0' }).end();
      return;
    }
    // A fresh connection per request: `hg serve` closes each one after its answer, and a kept-alive
    // socket reused after that fails (ECONNRESET) at random under concurrent requests.
    const forward = request(
      {
        host: '127.0.0.1',
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
        agent: false,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    req.pipe(forward);
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    headers,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A TCP listener on 127.0.0.1 that must never be reached (where a hostile origin points the client):
 * it counts connections and keeps what they sent; with `silent`, it also never answers or closes
 * (an origin that sends nothing), otherwise it closes each connection after a moment.
 */
export async function tcpTrap(options: { readonly silent?: boolean } = {}) {
  const sockets = new Set<Socket>();
  const received: Buffer[] = [];
  let connections = 0;
  const server = createTcpServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    if (!options.silent) setTimeout(() => socket.destroy(), 200);
  });
  const port = await listen(server);
  return {
    port,
    /** Connections accepted so far. */
    connections: () => connections,
    /** Everything the connections sent, as text. */
    received: () => Buffer.concat(received).toString('latin1'),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

async function listen(server: HttpServer | TcpServer): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : 0;
}
