import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingHttpHeaders } from 'node:http';
import { createServer as createTcpServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawJobs } from '#test/raw-jobs';
import { stubNetwork } from '#test/stub-network';
import { gitAdapter } from '#vcs/git';
import { OriginFailed, type RawJob } from '#vcs/origin';
import { tfvcAdapter } from '#vcs/tfvc/adapter';

/**
 * Origins that misbehave at a hop, for the Git and TFVC adapters (Mercurial and Subversion have the
 * same cases in their own guard tests): redirects to `ftp://` and `file://` (a listener and a real
 * file on this machine stand for what a hostile origin would aim at), refused; redirects to another
 * port or host name, which may be followed but never with the user's credentials; and origins that
 * accept a connection and send nothing, which fail within the idle deadline.
 */
const CREDENTIALS = { username: 'importer', password: 'pw-Redirect-never-sent' };
const BASIC = `Basic ${Buffer.from(`${CREDENTIALS.username}:${CREDENTIALS.password}`).toString('base64')}`;

let work: string;
let secretFile: string;
/** Where the front redirects every request it gets on its own name and port. */
let target = '';
/** Connections the ftp stand-in accepted. */
let ftpConnections = 0;
/** Accepts connections and never sends a byte. */
let silent: Server;
/** The headers of every request that reached another port or host name. */
const elsewhere: IncomingHttpHeaders[] = [];
let ftp: Server;
let front: ReturnType<typeof createHttpServer>;
let other: ReturnType<typeof createHttpServer>;
const portOf = (server: Server | ReturnType<typeof createHttpServer>) => {
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
};
const listen = (server: Server | ReturnType<typeof createHttpServer>) =>
  new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const close = (server: Server | ReturnType<typeof createHttpServer>) =>
  new Promise<void>((resolve) => server.close(() => resolve()));

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'redirects-'));
  secretFile = join(work, 'secret-bundle');
  await writeFile(secretFile, 'not for origins\n');
  ftp = createTcpServer((socket) => {
    ftpConnections += 1;
    socket.end('220 ready\r\n');
  });
  const recordElsewhere = (headers: IncomingHttpHeaders, res: import('node:http').ServerResponse) => {
    elsewhere.push(headers);
    res.writeHead(401, { 'www-authenticate': 'Basic realm="elsewhere"' }).end();
  };
  front = createHttpServer((req, res) => {
    if (req.headers.host !== `127.0.0.1:${portOf(front)}`) return recordElsewhere(req.headers, res);
    res.writeHead(302, { location: target.replace('{path}', req.url ?? '/') }).end();
  });
  other = createHttpServer((req, res) => recordElsewhere(req.headers, res));
  silent = createTcpServer((socket) => socket.on('error', () => undefined));
  await Promise.all([listen(ftp), listen(front), listen(other), listen(silent)]);
});

afterAll(async () => {
  silent.unref();
  await Promise.all([close(ftp), close(front), close(other)]);
  await rm(work, { recursive: true, force: true });
});

const jobIn = rawJobs(() => work);
const job = (extra: Partial<RawJob> = {}) => jobIn(`http://127.0.0.1:${portOf(front)}/project`, extra);

const network = stubNetwork({ 'mirror.test': ['127.0.0.1'] });
const adapters = [
  ['Git', () => gitAdapter({ resolve: network.resolve, dial: network.dial })],
  ['TFVC', () => tfvcAdapter({ resolve: network.resolve, dial: network.dial })],
] as const;

describe.each(adapters)('%s origins that redirect', (_name, adapter) => {
  it.each([
    ['ftp', () => `ftp://127.0.0.1:${portOf(ftp)}/x`],
    ['file', () => `file://${secretFile}`],
  ])('are refused at a redirect to %s://, and nothing there is touched', async (_scheme, to) => {
    target = to();
    const before = ftpConnections;
    const failure = await adapter()
      .importRawChunk(await job(), 600_000, () => undefined)
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OriginFailed);
    expect((failure as Error).message).not.toContain(work);
    expect(ftpConnections).toBe(before);
  });

  it.each([
    ['another port', () => `http://127.0.0.1:${portOf(other)}{path}`],
    ['another host name', () => `http://mirror.test:${portOf(front)}{path}`],
  ])('never send the credentials to %s', async (_where, to) => {
    target = to();
    elsewhere.length = 0;
    await adapter()
      .importRawChunk(await job({ credentials: CREDENTIALS }), 600_000, () => undefined)
      .catch(() => undefined);
    expect(elsewhere.length).toBeGreaterThan(0);
    expect(elsewhere.map((headers) => headers.authorization)).not.toContain(BASIC);
  });
});

describe('origins that send nothing', () => {
  it.each([
    ['Git over HTTP', () => `http://127.0.0.1:${portOf(silent)}/project.git`, 'sent nothing for 1.5 seconds'],
    [
      'Git over git://',
      () => `git://127.0.0.1:${portOf(silent)}/project.git`,
      'sent nothing for 1.5 seconds',
    ],
  ])('fail a %s import readably within the idle deadline', async (_what, url, message) => {
    const started = Date.now();
    const failure = await gitAdapter({ idleTimeoutMs: 1500 })
      .importRawChunk(await job({ url: url() }), 600_000, () => undefined)
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OriginFailed);
    expect((failure as Error).message).toContain(message);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('fail a TFVC import readably within the request deadline', async () => {
    const started = Date.now();
    const failure = await tfvcAdapter({ requestTimeoutMs: 1500 })
      .importRawChunk(
        await job({ url: `http://127.0.0.1:${portOf(silent)}/Collection` }),
        600_000,
        () => undefined,
      )
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OriginFailed);
    expect((failure as Error).message).toMatch(/did not answer in time/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
