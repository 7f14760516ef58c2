import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type RequestListener } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, prepareDumb, serveGitDaemon, serveGitHttp } from '#local/git-origins';
import { commitOnMain, objectFiles } from '#test/pack-growth';
import { descendantsOf, processTable } from '#test/process-tree';
import { LOOPBACK_ONLY, rawJobs } from '#test/raw-jobs';
import { stubNetwork } from '#test/stub-network';
import { adapterFor, detectOrigin } from '#vcs/adapters';
import { gitAdapter } from '#vcs/git';
import {
  OriginAuthFailed,
  OriginFailed,
  type RawJob,
  type RawProgress,
  rawRepositoryPath,
} from '#vcs/origin';
import { MAX_PACKS } from '#vcs/pack-upkeep';

const exec = promisify(execFile);
const AUTH = { username: 'importer', password: 'pw-Zq81-never-shown' };
const AUTHORS = [
  { name: 'Ada Lovelace', email: 'ada@example.com' },
  { name: 'José "Pepe" Núñez, Jr.', email: 'jose@example.com' },
  { name: 'Tab\tName', email: 'tab@example.com' },
];

const git = async (cwd: string, ...args: string[]) =>
  (
    await exec('git', args, {
      cwd,
      maxBuffer: 64 * 1024 * 1024,
      env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd },
    })
  ).stdout;
/** A bare HTTP server on a free port of 127.0.0.1. */
async function listen(handler: RequestListener) {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const refsOf = (repo: string) => git(repo, 'for-each-ref', '--format=%(objectname) %(objecttype) %(refname)');

let root: string;
let work: string;
let smart: OriginServer;
let locked: OriginServer;
let dumb: OriginServer;
let daemon: OriginServer;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'git-origins-'));
  work = await mkdtemp(join(tmpdir(), 'git-work-'));
  await makeFixtureRepository(join(root, 'small.git'), {
    commits: 25,
    branches: 2,
    annotatedTags: 2,
    authors: AUTHORS,
  });
  await makeFixtureRepository(join(root, 'history.git'), { commits: 3000, branches: 3, annotatedTags: 6 });
  await prepareDumb(join(root, 'small.git'));
  [smart, locked, dumb, daemon] = await Promise.all([
    serveGitHttp(root),
    serveGitHttp(root, { auth: AUTH }),
    serveGitHttp(root, { mode: 'dumb' }),
    serveGitDaemon(root),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([smart?.close(), locked?.close(), dumb?.close(), daemon?.close()]);
  await rm(root, { recursive: true, force: true });
  await rm(work, { recursive: true, force: true });
});

const job = rawJobs(() => work);

/** Runs chunks until done; returns every progress report and the number of chunks. */
async function importAll(adapter: ReturnType<typeof gitAdapter>, raw: RawJob, budgetMs: number) {
  const reports: RawProgress[] = [];
  let chunks = 0;
  for (;;) {
    chunks += 1;
    const chunk = await adapter.importRawChunk(raw, budgetMs, (progress) => reports.push(progress));
    reports.push(chunk);
    if (chunk.done) return { reports, chunks, last: chunk };
    if (chunks > 100) throw new Error('no end');
  }
}

describe('Git detection', () => {
  const adapter = gitAdapter();
  const access = (url: string, credentials?: typeof AUTH) => ({
    url,
    allowedAddresses: LOOPBACK_ONLY,
    credentials,
  });

  it('finds Git over smart HTTP, dumb HTTP and git://', async () => {
    expect(await adapter.detect(access(`${smart.url}/small.git`))).toEqual({ kind: 'found', vcs: 'git' });
    expect(await adapter.detect(access(`${dumb.url}/small.git`))).toEqual({ kind: 'found', vcs: 'git' });
    expect(await adapter.detect(access(`${daemon.url}/small.git`))).toEqual({ kind: 'found', vcs: 'git' });
    expect(dumb.requests).toContain('GET /small.git/HEAD');
  });

  it('finds nothing at a web page, a missing path, a closed port or a missing git:// repository', async () => {
    expect(await adapter.detect(access(`${smart.url}/page`))).toEqual({ kind: 'nothing' });
    expect(await adapter.detect(access(`${smart.url}/missing.git`))).toEqual({ kind: 'nothing' });
    expect(await adapter.detect(access(`${dumb.url}/missing.git`))).toEqual({ kind: 'nothing' });
    expect(await adapter.detect(access('http://127.0.0.1:9/small.git'))).toEqual({ kind: 'nothing' });
    expect(await adapter.detect(access(`${daemon.url}/missing.git`))).toEqual({ kind: 'nothing' });
  });

  it('says an origin behind Basic auth needs credentials until the right ones are given', async () => {
    expect(await adapter.detect(access(`${locked.url}/small.git`))).toEqual({ kind: 'needs_auth' });
    expect(await adapter.detect(access(`${locked.url}/small.git`, { ...AUTH, password: 'wrong' }))).toEqual({
      kind: 'needs_auth',
    });
    expect(await adapter.detect(access(`${locked.url}/small.git`, AUTH))).toEqual({
      kind: 'found',
      vcs: 'git',
    });
  });

  it('detectOrigin tries the candidates in order and keeps needs_auth when none finds anything', async () => {
    const candidates = [adapterFor('git')];
    expect(await detectOrigin(access(`${smart.url}/small.git`), candidates)).toEqual({
      kind: 'found',
      vcs: 'git',
    });
    expect(await detectOrigin(access(`${locked.url}/small.git`), candidates)).toEqual({ kind: 'needs_auth' });
    expect(await detectOrigin(access(`${smart.url}/page`), candidates)).toEqual({ kind: 'nothing' });
  });
});

describe('Git raw import', () => {
  it('imports a 3,000-commit history with branches and annotated tags through many small chunks, ids identical', async () => {
    const adapter = gitAdapter({ plan: { firstDepth: 20, growth: 2, minStepTimeoutMs: 60_000 } });
    const raw = await job(`${smart.url}/history.git`);
    const { reports, chunks, last } = await importAll(adapter, raw, 1);

    expect(chunks).toBeGreaterThanOrEqual(4);
    const origin = join(root, 'history.git');
    const imported = rawRepositoryPath(raw.workDir);
    expect(await refsOf(imported)).toBe(await refsOf(origin));
    expect((await refsOf(imported)).match(/ tag refs\/tags\//g)).toHaveLength(6);
    expect(last.commitCount).toBe(Number((await git(origin, 'rev-list', '--all', '--count')).trim()));
    expect(last.commitCount).toBe(3000);
    expect((await git(imported, 'symbolic-ref', 'HEAD')).trim()).toBe('refs/heads/main');
    expect((await git(imported, 'rev-parse', '--is-shallow-repository')).trim()).toBe('false');
    const percents = reports.map((report) => report.percent ?? 0);
    expect(percents.every((value, i) => i === 0 || value >= (percents[i - 1] ?? 0))).toBe(true);
    expect(percents.at(-1)).toBe(100);
    expect(percents.filter((value) => value > 0 && value < 100).length).toBeGreaterThan(2);
    // A finished import does nothing more.
    expect(await adapter.importRawChunk(raw, 1, () => undefined)).toMatchObject({ done: true, percent: 100 });
  }, 120_000);

  it('a sync keeps what it fetched as one pack, and past MAX_PACKS syncs the small packs are rolled up', async () => {
    const adapter = gitAdapter();
    const origin = join(root, 'growing.git');
    await exec('cp', ['-a', join(root, 'small.git'), origin]);
    const raw = await job(`${smart.url}/growing.git`);
    await importAll(adapter, raw, 60_000);
    const imported = rawRepositoryPath(raw.workDir);
    const packs: number[] = [];
    for (let sync = 1; sync <= MAX_PACKS + 2; sync++) {
      await commitOnMain(origin, `sync ${sync}`);
      await adapter.reopen(raw.workDir);
      await importAll(adapter, raw, 60_000);
      const files = await objectFiles(imported);
      expect(files.looseFolders).toEqual([]);
      packs.push(files.packs);
      expect(await refsOf(imported)).toBe(await refsOf(origin));
    }
    // One pack more each sync (the import's clone wrote the first), until they are rolled up.
    expect(packs.slice(0, MAX_PACKS - 1)).toEqual(packs.slice(0, MAX_PACKS - 1).map((_, i) => i + 2));
    expect(Math.max(...packs)).toBeLessThanOrEqual(MAX_PACKS);
    await git(imported, 'fsck', '--strict');
  }, 120_000);

  it('fetches a small history whole in one chunk over smart HTTP, dumb HTTP and git://', async () => {
    const adapter = gitAdapter();
    for (const base of [smart.url, dumb.url, daemon.url]) {
      const raw = await job(`${base}/small.git`);
      const chunk = await adapter.importRawChunk(raw, 600_000, () => undefined);
      expect(chunk).toEqual({ done: true, commitCount: 25, percent: 100 });
      expect(await refsOf(rawRepositoryPath(raw.workDir))).toBe(await refsOf(join(root, 'small.git')));
    }
  }, 60_000);

  it('imports a history over 50 MB with thousands of commits over git:// whole, refs identical', async () => {
    // The git:// tunnel once ended with its socket and dropped what it had not yet written: packs
    // beyond a few hundred KiB failed with "fetch-pack: invalid index-pack output".
    const origin = join(root, 'large.git');
    await makeFixtureRepository(origin, {
      commits: 3000,
      branches: 3,
      annotatedTags: 6,
      bytesPerCommit: 18 * 1024,
    });
    const { stdout } = await exec('du', ['-sk', origin]);
    expect(Number(stdout.split('\t')[0])).toBeGreaterThan(50 * 1024);

    const raw = await job(`${daemon.url}/large.git`);
    const chunk = await gitAdapter().importRawChunk(raw, 600_000, () => undefined);

    expect(chunk).toEqual({ done: true, commitCount: 3000, percent: 100 });
    expect(await refsOf(rawRepositoryPath(raw.workDir))).toBe(await refsOf(origin));
  }, 120_000);

  it('falls back from depth steps to a whole fetch for dumb HTTP', async () => {
    const adapter = gitAdapter({ plan: { firstDepth: 5 } });
    const raw = await job(`${dumb.url}/small.git`);
    const { last } = await importAll(adapter, raw, 1);
    expect(last.commitCount).toBe(25);
    expect(await refsOf(rawRepositoryPath(raw.workDir))).toBe(await refsOf(join(root, 'small.git')));
  });

  it('imports from an origin behind Basic auth with the right credentials', async () => {
    const raw = await job(`${locked.url}/small.git`, { credentials: AUTH });
    expect(await gitAdapter().importRawChunk(raw, 600_000, () => undefined)).toMatchObject({ done: true });
  });

  it('fails with OriginAuthFailed without credentials or with a wrong password, never showing it', async () => {
    const adapter = gitAdapter();
    const none = adapter.importRawChunk(await job(`${locked.url}/small.git`), 600_000, () => undefined);
    await expect(none).rejects.toThrow(OriginAuthFailed);
    await expect(none).rejects.toThrow('requires a username and password');
    const wrong = { ...AUTH, password: 'wrong-Secret-77' };
    const error = await adapter
      .importRawChunk(await job(`${locked.url}/small.git`, { credentials: wrong }), 600_000, () => undefined)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OriginAuthFailed);
    expect((error as Error).message).toBe('The origin refused the username and password');
    expect(`${(error as Error).message}${(error as Error).stack}`).not.toContain('wrong-Secret-77');
  });

  it('never puts the password on a command line or in an environment (checked in /proc during a slow fetch)', async () => {
    const slow = await serveGitHttp(root, { auth: AUTH, delayMs: 400 });
    try {
      const raw = await job(`${slow.url}/small.git`, { credentials: AUTH });
      const seen: string[] = [];
      let running = true;
      const watcher = (async () => {
        while (running) {
          // This test's own processes only: the suite's other files run git at the same time.
          for (const { pid } of descendantsOf(await processTable(), process.pid)) {
            const line = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
            if (line.startsWith('git') || line.includes('\0git') || line.includes('git-remote'))
              seen.push(line, await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => ''));
          }
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      await gitAdapter().importRawChunk(raw, 600_000, () => undefined);
      running = false;
      await watcher;
      expect(seen.some((line) => /\0(?:fetch|clone)\0/.test(line))).toBe(true);
      expect(seen.join('\n')).not.toContain(AUTH.password);
      expect(seen.join('\n')).not.toContain(AUTH.username);
    } finally {
      await slow.close();
    }
  }, 60_000);

  it('sends the credentials only to the host and port named, never after a redirect to another', async () => {
    // A front that redirects git's first request elsewhere; every other host and port answers
    // 401 (so git looks for credentials for it) and records what it was sent.
    const sent: (string | undefined)[] = [];
    const front = await listen((req, res) => {
      if (req.headers.host === `127.0.0.1:${front.port}`)
        return void res.writeHead(302, { location: `http://${redirectTo}${req.url}` }).end();
      sent.push(req.headers.authorization);
      res.writeHead(401, { 'www-authenticate': 'Basic realm="other"' }).end();
    });
    const other = await listen((req, res) => {
      sent.push(req.headers.authorization);
      res.writeHead(401, { 'www-authenticate': 'Basic realm="other"' }).end();
    });
    const network = stubNetwork({ 'mirror.test': ['127.0.0.1'] });
    let redirectTo = '';
    try {
      for (const target of [`127.0.0.1:${other.port}`, `mirror.test:${front.port}`]) {
        redirectTo = target;
        const raw = await job(`http://127.0.0.1:${front.port}/small.git`, { credentials: AUTH });
        const adapter = gitAdapter({ resolve: network.resolve, dial: network.dial });
        await expect(adapter.importRawChunk(raw, 600_000, () => undefined)).rejects.toThrow(OriginAuthFailed);
      }
      const basic = `Basic ${Buffer.from(`${AUTH.username}:${AUTH.password}`).toString('base64')}`;
      expect(sent.length).toBeGreaterThan(0);
      expect(sent).not.toContain(basic);
    } finally {
      await Promise.all([front.close(), other.close()]);
    }
  });

  it('says plainly when there is no repository at the URL', async () => {
    const missing = gitAdapter().importRawChunk(
      await job(`${smart.url}/missing.git`),
      600_000,
      () => undefined,
    );
    await expect(missing).rejects.toThrow(OriginFailed);
    await expect(missing).rejects.toThrow(/No Git repository was found|could not be reached/);
    const closed = gitAdapter().importRawChunk(
      await job('http://127.0.0.1:9/x.git'),
      600_000,
      () => undefined,
    );
    await expect(closed).rejects.toThrow('could not be reached');
  });

  it('stops when the raw history grows over the size limit', async () => {
    const raw = await job(`${smart.url}/history.git`);
    const big = gitAdapter({ maxBytes: 64 * 1024, plan: { firstDepth: 50 } });
    // Chunks until done: whichever chunk (the first on a slow machine) crosses the limit must stop.
    const allChunks = async () => {
      for (;;) if ((await big.importRawChunk(raw, 1, () => undefined)).done) return;
    };
    await expect(allChunks()).rejects.toThrow('larger than the import limit');
  }, 60_000);

  it('refuses a history with more objects than the limit as soon as the origin announces them', async () => {
    const raw = await job(`${smart.url}/history.git`);
    const many = gitAdapter({ maxObjects: 40 });
    await expect(many.importRawChunk(raw, 600_000, () => undefined)).rejects.toThrow(
      'more objects than the import limit',
    );
  }, 60_000);
});

describe('Git authors', () => {
  it('lists every distinct author and committer over all refs, odd names intact', async () => {
    const adapter = gitAdapter();
    const raw = await job(`${smart.url}/small.git`);
    await adapter.importRawChunk(raw, 600_000, () => undefined);
    const authors = await adapter.authors(raw);
    expect(new Set(authors.map((author) => author.remoteId))).toEqual(
      new Set(AUTHORS.map((author) => `${author.name} <${author.email}>`)),
    );
    expect(authors).toHaveLength(AUTHORS.length);
    const jose = authors.find((author) => author.email === 'jose@example.com');
    expect(jose).toEqual({
      remoteId: 'José "Pepe" Núñez, Jr. <jose@example.com>',
      remoteName: 'José "Pepe" Núñez, Jr.',
      name: 'José "Pepe" Núñez, Jr.',
      email: 'jose@example.com',
    });
  });

  it('lists nobody for an empty raw history', async () => {
    const empty = join(root, 'empty.git');
    await exec('git', ['init', '--bare', '--quiet', empty]);
    const raw = await job(`${smart.url}/empty.git`);
    expect(await gitAdapter().importRawChunk(raw, 600_000, () => undefined)).toEqual({
      done: true,
      commitCount: 0,
      percent: 100,
    });
    expect(await gitAdapter().authors(raw)).toEqual([]);
  });
});
