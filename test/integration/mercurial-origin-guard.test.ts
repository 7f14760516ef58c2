import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hgFront, makeHgFixture, serveHg, tcpTrap } from '#local/hg-origins';
import { rawJobs } from '#test/raw-jobs';
import { stubNetwork } from '#test/stub-network';
import { mercurialAdapter } from '#vcs/mercurial/adapter';
import { OriginFailed, type RawJob, rawRepositoryPath } from '#vcs/origin';

/**
 * A hostile Mercurial origin points the client elsewhere (clone bundles, redirects), says nothing,
 * or wants credentials: hg talks to the origin's scheme, host and port only, fails readably, and
 * the password is nowhere another process or a file could show it.
 */
const exec = promisify(execFile);
const AUTH = { username: 'importer', password: 'pw-Guard-93-never-seen' };
const HG_ENV = { PATH: process.env.PATH, HGRCPATH: '', HGPLAIN: '1' };
const FIXTURE_REFS = [
  'refs/heads/branches/stable',
  'refs/heads/feature',
  'refs/heads/main',
  'refs/tags/v1.0',
];

let root: string;
let work: string;
/** A bundle of another repository (3 changesets) on this machine's disk. */
let foreignBundle: string;
let index: Awaited<ReturnType<typeof serveHg>>;
/** In front of the index: redirects; `locked`: Basic auth, slow, one redirect. */
let open: Awaited<ReturnType<typeof hgFront>>;
let locked: Awaited<ReturnType<typeof hgFront>>;
let ftpTrap: Awaited<ReturnType<typeof tcpTrap>>;
let httpTrap: Awaited<ReturnType<typeof tcpTrap>>;
let portTrap: Awaited<ReturnType<typeof tcpTrap>>;
let silent: Awaited<ReturnType<typeof tcpTrap>>;
const network = stubNetwork({ localhost: ['127.0.0.1'] });

const hg = (cwd: string, ...args: string[]) => exec('hg', args, { cwd, env: HG_ENV });
const git = async (cwd: string, ...args: string[]) =>
  (await exec('git', args, { cwd, env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd } }))
    .stdout;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hg-guard-origins-'));
  work = await mkdtemp(join(tmpdir(), 'hg-guard-work-'));
  const repos = join(root, 'index');
  await mkdir(repos);
  [ftpTrap, httpTrap, portTrap, silent] = await Promise.all([
    tcpTrap(),
    tcpTrap(),
    tcpTrap(),
    tcpTrap({ silent: true }),
  ]);
  const other = join(root, 'other');
  await Promise.all([makeHgFixture(join(repos, 'plain')), mkdir(other)]);
  await hg(other, 'init');
  for (const name of ['x', 'y', 'z']) {
    await writeFile(join(other, name), `${name}\n`);
    await hg(other, 'commit', '-q', '-A', '-u', 'Mallory <m@example.com>', '-m', name);
  }
  foreignBundle = join(root, 'foreign.hg');
  await hg(other, 'bundle', '-q', '-a', foreignBundle);
  // Three copies of the fixture, each advertising one clone bundle somewhere else.
  const manifests = {
    'cb-ftp': `ftp://127.0.0.1:${ftpTrap.port}/x`,
    'cb-http': `http://127.0.0.1:${httpTrap.port}/bundle.hg`,
    'cb-file': `file://${foreignBundle}`,
  };
  for (const [name, manifest] of Object.entries(manifests)) {
    await hg(root, 'clone', '-q', '-U', join(repos, 'plain'), join(repos, name));
    await writeFile(join(repos, name, '.hg', 'clonebundles.manifest'), `${manifest}\n`);
  }
  // Every repository also prefers stream clones.
  index = await serveHg({ root: repos }, ['extensions.clonebundles=', 'server.preferuncompressed=true']);
  const redirects: Record<string, (query: string) => { status: number; location: string }> = {
    '/to-ftp': () => ({ status: 302, location: `ftp://127.0.0.1:${ftpTrap.port}/` }),
    '/to-file': () => ({ status: 301, location: `file://${foreignBundle}` }),
    '/to-port': () => ({ status: 302, location: `http://127.0.0.1:${portTrap.port}/plain/` }),
    '/to-host': (query) => ({ status: 307, location: `http://localhost:${open.port}/plain/${query}` }),
    '/moved': (query) => ({ status: 301, location: `/plain/${query}` }),
  };
  const route = (path: string) => {
    const [pathname = '', query = ''] = path.split(/(?=\?)/);
    return redirects[pathname.replace(/\/$/, '')]?.(query);
  };
  open = await hgFront(index, { redirect: route });
  locked = await hgFront(index, {
    auth: AUTH,
    delayMs: 150,
    redirect: (path) =>
      path.startsWith('/away')
        ? { status: 302, location: `http://127.0.0.1:${portTrap.port}/plain/` }
        : undefined,
  });
}, 120_000);

afterAll(async () => {
  await Promise.all(
    [open, locked, index, ftpTrap, httpTrap, portTrap, silent].map((server) => server?.close()),
  );
  await rm(root, { recursive: true, force: true });
  await rm(work, { recursive: true, force: true });
});

const job = rawJobs(() => work);

const refs = async (raw: RawJob) =>
  (await git(rawRepositoryPath(raw.workDir), 'for-each-ref', '--format=%(refname)')).trim().split('\n');

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => new Error('the import succeeded'),
    (error: unknown) => error as Error,
  );

describe('Mercurial origins that point the client elsewhere', () => {
  it('never fetches a clone bundle: ftp, http on another port, a file of another repository', async () => {
    expect(await (await fetch(`${index.url}/cb-file/?cmd=capabilities`)).text()).toContain('clonebundles');
    const adapter = mercurialAdapter();
    for (const name of ['cb-ftp', 'cb-http', 'cb-file']) {
      const raw = await job(`${open.url}/${name}/`);
      expect(await adapter.importRawChunk(raw, 600_000, () => undefined)).toEqual({
        done: true,
        commitCount: 5,
        percent: 100,
      });
      expect(await refs(raw)).toEqual(FIXTURE_REFS);
    }
    expect(ftpTrap.connections()).toBe(0);
    expect(httpTrap.connections()).toBe(0);
  }, 60_000);

  it('pulls a changegroup, never a stream clone, from an origin that prefers streams', async () => {
    expect(await (await fetch(`${index.url}/plain/?cmd=capabilities`)).text()).toContain('stream-preferred');
    const before = open.headers.length;
    const raw = await job(`${open.url}/plain/`);
    expect(await mercurialAdapter().importRawChunk(raw, 600_000, () => undefined)).toMatchObject({
      done: true,
      commitCount: 5,
    });
    // getbundle's arguments travel in X-HgArg-<n> headers.
    const args = open.headers
      .slice(before)
      .flatMap((headers) => Object.entries(headers).filter(([name]) => name.startsWith('x-hgarg')))
      .map(([, value]) => String(value))
      .join('&');
    expect(args).toContain('cg=1');
    expect(args).not.toContain('stream=1');
  }, 30_000);

  it('refuses a redirect to another scheme, port or host name before connecting, without naming a local path', async () => {
    const adapter = mercurialAdapter({ resolve: network.resolve, dial: network.dial });
    const base = open.url;
    const cases = [
      ['to-ftp', 'a URL of scheme ftp'],
      ['to-file', 'a URL of scheme file'],
      ['to-port', `http://127.0.0.1:${portTrap.port}`],
      ['to-host', `http://localhost:${open.port}`],
    ] as const;
    for (const [path, target] of cases) {
      const error = await failure(
        adapter.importRawChunk(await job(`${base}/${path}`), 600_000, () => undefined),
      );
      expect(error).toBeInstanceOf(OriginFailed);
      expect(error.message).toBe(
        `The origin redirected to ${target}; redirects are followed only within ${base}`,
      );
      for (const local of [root, work, tmpdir()]) expect(error.message).not.toContain(local);
    }
    expect(ftpTrap.connections()).toBe(0);
    expect(portTrap.connections()).toBe(0);
    expect(network.dialled.filter((target) => target.host === 'localhost')).toEqual([]);
    expect(open.headers.filter((headers) => headers.host?.startsWith('localhost'))).toEqual([]);
  }, 60_000);

  it('follows a redirect within the origin', async () => {
    const raw = await job(`${open.url}/moved/`);
    expect(await mercurialAdapter().importRawChunk(raw, 600_000, () => undefined)).toMatchObject({
      done: true,
      commitCount: 5,
    });
    expect(await refs(raw)).toEqual(FIXTURE_REFS);
  }, 30_000);

  it('fails readably, without halving and retrying, when the origin sends nothing', async () => {
    const adapter = mercurialAdapter({ idleTimeoutMs: 1500, probeTimeoutMs: 300 });
    const started = Date.now();
    const error = await failure(
      adapter.importRawChunk(await job(`http://127.0.0.1:${silent.port}/`), 600_000, () => undefined),
    );
    expect(error).toEqual(new OriginFailed('The origin sent nothing for 1.5 seconds'));
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(silent.connections()).toBeGreaterThan(0);
  }, 20_000);
});

describe('Mercurial origin credentials', () => {
  it('reach hg on a descriptor only: no command line, environment or file under the job holds the password', async () => {
    const raw = await job(`${locked.url}/plain/`, { credentials: AUTH });
    const found: string[] = [];
    let samples = 0;
    let sawPull = false;
    let running = true;
    const sampler = (async () => {
      while (running) {
        for (const pid of await readdir('/proc').catch(() => [])) {
          if (!/^\d+$/.test(pid)) continue;
          const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
          const environ = await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '');
          if (/\0pull\0/.test(cmdline) && cmdline.includes(raw.workDir)) sawPull = true;
          if (cmdline.includes(AUTH.password)) found.push(`cmdline of ${pid}`);
          if (environ.includes(AUTH.password)) found.push(`environ of ${pid}`);
        }
        const files = await readdir(raw.workDir, { recursive: true }).catch(() => []);
        for (const file of files) {
          const text = await readFile(join(raw.workDir, file), 'latin1').catch(() => '');
          if (text.includes(AUTH.password)) found.push(file);
        }
        samples += 1;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    try {
      expect(await mercurialAdapter().importRawChunk(raw, 600_000, () => undefined)).toMatchObject({
        done: true,
        commitCount: 5,
      });
    } finally {
      running = false;
      await sampler;
    }
    expect(sawPull).toBe(true);
    expect(samples).toBeGreaterThan(3);
    expect(found).toEqual([]);
  }, 30_000);

  it('are not sent where the origin redirects to another port', async () => {
    const error = await failure(
      mercurialAdapter().importRawChunk(
        await job(`${locked.url}/away/`, { credentials: AUTH }),
        600_000,
        () => undefined,
      ),
    );
    expect(error).toEqual(
      new OriginFailed(
        `The origin redirected to http://127.0.0.1:${portTrap.port}; redirects are followed only within ${locked.url}`,
      ),
    );
    // The origin got the credentials (it answered the redirect only then); the other port got nothing.
    expect(locked.headers.some((headers) => headers.authorization !== undefined)).toBe(true);
    expect(portTrap.connections()).toBe(0);
    expect(portTrap.received()).not.toMatch(/authorization/i);
  }, 30_000);
});
