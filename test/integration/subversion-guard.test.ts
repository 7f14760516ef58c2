import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SvnHttpServer, serveSvnHttp } from '#local/svn-http-origins';
import { type SvnServer, serveSvn } from '#local/svn-origins';
import { LOOPBACK_ONLY, rawJobs } from '#test/raw-jobs';
import { stubNetwork } from '#test/stub-network';
import { interceptionCertificate } from '#vcs/interception-certificate';
import type { RawJob } from '#vcs/origin';
import { subversionAdapter } from '#vcs/subversion/adapter';

/*
 * Subversion behind the pinned guard: svn follows an origin's redirect to any URL it can open
 * (svn://, svn+ssh://, file://, another host), so every case below would reach a listener or the
 * disk without the guard. Every origin and listener is on 127.0.0.1.
 */
const exec = promisify(execFile);
const USER = { username: 'ada', password: 'pw-Redirected-never-sent' };

let root: string;
let fileRepo: string;
/** Raw TCP: counts connections (svn://, another port). */
let tcpListener: TcpServer;
let tcpConnections = 0;
/** HTTP: answers 401 and records every request with its Authorization header. */
let httpListener: Server;
const httpSeen: string[] = [];
let redirector: Server;
let tls: { key: string; cert: string };
let httpsRedirector: Server;
let silentHttp: TcpServer;
let svnserve: SvnServer;
let davs: SvnHttpServer;

const portOf = (server: Server | TcpServer) => {
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : 0;
};
const listen = async <T extends Server | TcpServer>(server: T): Promise<T> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
};

/** Where `/<case>/…` of the redirectors sends svn, and with which status. */
const targets = (): Record<string, [number, string]> => ({
  svn: [301, `svn://127.0.0.1:${portOf(tcpListener)}/repo`],
  ssh: [302, 'svn+ssh://127.0.0.1/x'],
  file: [307, `file://${fileRepo}`],
  missing: [307, `file://${fileRepo}-missing`],
  port: [301, `http://127.0.0.1:${portOf(httpListener)}/svn/repo`],
  host: [302, `http://localhost:${portOf(httpListener)}/svn/repo`],
});

/** `/locked/<case>` asks for Basic credentials first and redirects only once it has them. */
function redirect(req: IncomingMessage, res: import('node:http').ServerResponse) {
  const [, first, second] = (req.url ?? '').split('/');
  const locked = first === 'locked';
  if (locked && !req.headers.authorization) {
    res.writeHead(401, { 'www-authenticate': 'Basic realm="origin"' }).end();
    return;
  }
  const [status, location] = targets()[(locked ? second : first) ?? ''] ?? [404, ''];
  res.writeHead(status, location ? { location } : {}).end();
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svn-guard-'));
  fileRepo = join(root, 'private-mirror');
  await exec('svnadmin', ['create', fileRepo]);
  const parent = join(root, 'repos');
  await mkdir(parent);
  await exec('svnadmin', ['create', join(parent, 'repo')]);
  await exec('svn', ['mkdir', '-q', '-m', 'Layout', `file://${join(parent, 'repo')}/trunk`], {
    env: { PATH: process.env.PATH, HOME: root },
  });
  tls = await interceptionCertificate('127.0.0.1');
  tcpListener = await listen(
    createTcpServer((socket) => {
      tcpConnections += 1;
      socket.destroy();
    }),
  );
  httpListener = await listen(
    createHttpServer((req, res) => {
      httpSeen.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      res.writeHead(401, { 'www-authenticate': 'Basic realm="elsewhere"' }).end();
    }),
  );
  redirector = await listen(createHttpServer(redirect));
  httpsRedirector = await listen(createHttpsServer(tls, redirect));
  // Accepts and never answers: an origin that sends nothing.
  silentHttp = await listen(createTcpServer(() => undefined));
  [svnserve, davs] = await Promise.all([serveSvn(parent), serveSvnHttp({ parentPath: parent, tls })]);
}, 30_000);

afterAll(async () => {
  for (const server of [tcpListener, httpListener, redirector, httpsRedirector, silentHttp]) {
    (server as Server).closeAllConnections?.();
    server?.close();
  }
  await Promise.all([svnserve?.close(), davs?.close()]);
  await rm(root, { recursive: true, force: true });
});

const job = rawJobs(() => root);
const importError = async (adapter: ReturnType<typeof subversionAdapter>, raw: RawJob) =>
  adapter
    .importRawChunk(raw, 600_000, () => undefined)
    .then(
      () => new Error('imported'),
      (error: unknown) => error as Error,
    );

const refusedTo = (url: string) =>
  `The origin redirected to ${url}: a Subversion import does not follow a redirect to another origin; import from that URL instead`;

describe('Subversion redirects behind the guard', () => {
  const adapter = subversionAdapter({ extraCa: [] });

  it('refuses a redirect to svn://, svn+ssh:// or file://, in detection and import, reaching nothing', async () => {
    const origin = `http://127.0.0.1:${portOf(redirector)}`;
    const cases: [string, string][] = [
      ['svn', refusedTo(`svn://127.0.0.1:${portOf(tcpListener)}/repo`)],
      ['ssh', 'The origin redirected to a svn+ssh: URL, which a Subversion import does not follow'],
      ['file', 'The origin redirected to a file: URL, which a Subversion import does not follow'],
      ['missing', 'The origin redirected to a file: URL, which a Subversion import does not follow'],
    ];
    for (const [name, message] of cases) {
      const url = `${origin}/${name}/repo`;
      expect((await importError(adapter, await job(url))).message).toBe(message);
      await expect(adapter.detect({ url, allowedAddresses: LOOPBACK_ONLY })).rejects.toThrow(message);
    }
    expect(tcpConnections).toBe(0);
  }, 30_000);

  it('refuses a redirect to another port or host name, and never sends the password there', async () => {
    const origin = `http://127.0.0.1:${portOf(redirector)}`;
    const other = portOf(httpListener);
    for (const [name, target] of [
      ['port', `http://127.0.0.1:${other}/svn/repo`],
      ['host', `http://localhost:${other}/svn/repo`],
    ] as const) {
      for (const url of [`${origin}/${name}/repo`, `${origin}/locked/${name}/repo`]) {
        const error = await importError(adapter, await job(url, { credentials: USER }));
        expect(error.message).toBe(refusedTo(target));
        const detection = await adapter.detect({ url, allowedAddresses: LOOPBACK_ONLY, credentials: USER });
        expect(detection.kind).toBe('nothing');
      }
    }
    // Detection may ask the target (as Node, without credentials) whether it is Subversion; svn
    // itself never got there, and no password ever did.
    expect(httpSeen.filter((line) => !line.startsWith('OPTIONS ') || line.includes('Basic'))).toEqual([]);
  }, 30_000);

  it('sees through https: a redirect inside TLS to svn:// or file:// is refused as well', async () => {
    const https = subversionAdapter({ extraCa: [tls.cert] });
    const origin = `https://127.0.0.1:${portOf(httpsRedirector)}`;
    expect((await importError(https, await job(`${origin}/svn/repo`))).message).toBe(
      refusedTo(`svn://127.0.0.1:${portOf(tcpListener)}/repo`),
    );
    expect((await importError(https, await job(`${origin}/file/repo`))).message).toBe(
      'The origin redirected to a file: URL, which a Subversion import does not follow',
    );
    expect(tcpConnections).toBe(0);
  }, 30_000);
});

describe('Subversion origins through the pinned guard', () => {
  it('imports over svn:// and over https (intercepted, the origin verified), dialling only the origin', async () => {
    const { resolve, dial, dialled } = stubNetwork({});
    const adapter = subversionAdapter({ resolve, dial, extraCa: [tls.cert] });
    for (const url of [svnserve.url('repo'), davs.url('repo')]) {
      const before = dialled.length;
      expect(await adapter.importRawChunk(await job(url), 600_000, () => undefined)).toMatchObject({
        done: true,
        commitCount: 1,
      });
      const port = Number(new URL(url).port);
      expect(dialled.length).toBeGreaterThan(before);
      expect(dialled.slice(before).every((target) => target.port === port)).toBe(true);
    }
    // Without the test CA the proxy does not trust the origin's certificate: nothing is imported.
    await expect(
      subversionAdapter().importRawChunk(await job(davs.url('repo')), 600_000, () => undefined),
    ).rejects.toThrow();
  }, 30_000);

  it('fails readably when the origin sends nothing (http and svn://), within the idle limit', async () => {
    const adapter = subversionAdapter({ idleTimeoutMs: 2_000 });
    for (const url of [
      `http://127.0.0.1:${portOf(silentHttp)}/svn/repo`,
      `svn://127.0.0.1:${portOf(silentHttp)}/repo`,
    ]) {
      const started = Date.now();
      const error = await importError(adapter, await job(url));
      expect(error.message).toBe(`The origin 127.0.0.1:${portOf(silentHttp)} sent nothing for 2 seconds`);
      expect(Date.now() - started).toBeLessThan(10_000);
    }
  }, 30_000);
});
