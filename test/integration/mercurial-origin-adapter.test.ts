import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import {
  basicAuthProxy,
  HG_FIXTURE_USERS,
  makeHgBulkRepository,
  makeHgFixture,
  serveHg,
} from '#local/hg-origins';
import { LOOPBACK_ONLY, rawJobs } from '#test/raw-jobs';
import { stubNetwork } from '#test/stub-network';
import { adapterFor, detectionCandidates, detectOrigin } from '#vcs/adapters';
import { directorySize } from '#vcs/limits';
import { mercurialAdapter } from '#vcs/mercurial/adapter';
import {
  ForbiddenAddress,
  OriginAuthFailed,
  OriginFailed,
  type RawJob,
  type RawProgress,
  rawRepositoryPath,
} from '#vcs/origin';

const exec = promisify(execFile);
const AUTH = { username: 'importer', password: 'pw-Hg81-never-shown' };

const git = async (cwd: string, ...args: string[]) =>
  (await exec('git', args, { cwd, env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd } }))
    .stdout;

let root: string;
let index: string;
let work: string;
let one: OriginServer;
let web: OriginServer;
let locked: OriginServer;
let gitServer: OriginServer;
/** 600 changesets (500 on default, 100 on `stable`), one new file each. */
let bulk: OriginServer;
let empty: OriginServer;
/** Two heads on `default`: 0 → 1, and 0 → 2 (the tip). */
let forked: OriginServer;
const BULK_REVISIONS = 600;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hg-origins-'));
  work = await mkdtemp(join(tmpdir(), 'hg-work-'));
  index = join(root, 'index');
  await makeHgFixture(join(root, 'one'));
  await mkdir(index);
  await Promise.all([
    makeHgFixture(join(index, 'alpha')),
    makeHgFixture(join(index, 'beta')),
    makeHgBulkRepository(join(root, 'bulk'), { revisions: BULK_REVISIONS, branchRevisions: 100 }),
  ]);
  [one, web, gitServer, bulk] = await Promise.all([
    serveHg({ repo: join(root, 'one') }),
    serveHg({ root: index }),
    serveGitHttp(root),
    serveHg({ repo: join(root, 'bulk') }),
  ]);
  await exec('hg', ['init', join(root, 'empty')], { env: { PATH: process.env.PATH, HGRCPATH: '' } });
  empty = await serveHg({ repo: join(root, 'empty') });
  const fork = join(root, 'forked');
  const hg = (...args: string[]) =>
    exec('hg', args, {
      cwd: fork,
      env: { PATH: process.env.PATH, HGRCPATH: '', HGUSER: 'Ann <ann@example.com>' },
    });
  await exec('hg', ['init', fork], { env: { PATH: process.env.PATH, HGRCPATH: '' } });
  for (const [file, parent] of [['base.txt'], ['one.txt'], ['two.txt', '0']] as const) {
    if (parent) await hg('update', '-q', parent);
    await writeFile(join(fork, file), `${file}\n`);
    await hg('commit', '-q', '-A', '-m', file);
  }
  forked = await serveHg({ repo: fork });
  locked = await basicAuthProxy(one, AUTH);
}, 180_000);

afterAll(async () => {
  await Promise.all([
    one?.close(),
    web?.close(),
    locked?.close(),
    gitServer?.close(),
    bulk?.close(),
    empty?.close(),
    forked?.close(),
  ]);
  await rm(root, { recursive: true, force: true });
  await rm(work, { recursive: true, force: true });
});

const job = rawJobs(() => work);
const access = (url: string, credentials?: typeof AUTH) => ({
  url,
  allowedAddresses: LOOPBACK_ONLY,
  credentials,
});

describe('Mercurial detection', () => {
  const adapter = mercurialAdapter();

  it('finds a repository, needs credentials behind Basic auth, finds nothing at Git or a web page', async () => {
    expect(await adapter.detect(access(one.url))).toEqual({ kind: 'found', vcs: 'mercurial' });
    expect(await adapter.detect(access(locked.url))).toEqual({ kind: 'needs_auth' });
    expect(await adapter.detect(access(locked.url, AUTH))).toEqual({ kind: 'found', vcs: 'mercurial' });
    expect(await adapter.detect(access(`${gitServer.url}/page`))).toEqual({ kind: 'nothing' });
    expect(await adapter.detect(access('http://127.0.0.1:9/'))).toEqual({ kind: 'nothing' });
  });

  it('offers the repositories of an hgweb index as project choices', async () => {
    expect(await adapter.detect(access(web.url))).toEqual({
      kind: 'multiple',
      choices: [
        { vcs: 'mercurial', humanName: 'alpha', path: 'alpha/' },
        { vcs: 'mercurial', humanName: 'beta', path: 'beta/' },
      ],
    });
    expect(await adapter.detect(access(`${web.url}/beta`))).toEqual({ kind: 'found', vcs: 'mercurial' });
  });

  it('detectOrigin tries Git first, then Mercurial, Subversion and TFVC', async () => {
    const candidates = detectionCandidates();
    expect(candidates.map((candidate) => candidate.vcs)).toEqual(['git', 'mercurial', 'subversion', 'tfvc']);
    expect(await detectOrigin(access(one.url), candidates)).toEqual({ kind: 'found', vcs: 'mercurial' });
  });
});

describe('Mercurial raw import', () => {
  it('imports branches, bookmarks and tags into raw.git as GitHub users expect, in several chunks', async () => {
    const adapter = mercurialAdapter({ hgPlan: { firstRevs: 2, growth: 2 } });
    const raw = await job(one.url);
    const percents: number[] = [];
    let chunks = 0;
    let last: Awaited<ReturnType<typeof adapter.importRawChunk>>;
    do {
      chunks += 1;
      last = await adapter.importRawChunk(raw, 1, (progress) => percents.push(progress.percent ?? 0));
      percents.push(last.percent ?? 0);
    } while (!last.done && chunks < 20);
    expect(last).toEqual({ done: true, commitCount: 5, percent: 100 });
    expect(chunks).toBeGreaterThanOrEqual(2);
    expect(percents.every((value, i) => i === 0 || value >= (percents[i - 1] ?? 0))).toBe(true);

    const repo = rawRepositoryPath(raw.workDir);
    const refs = (await git(repo, 'for-each-ref', '--format=%(refname)')).trim().split('\n');
    expect(refs).toEqual([
      'refs/heads/branches/stable',
      'refs/heads/feature',
      'refs/heads/main',
      'refs/tags/v1.0',
    ]);
    expect((await git(repo, 'symbolic-ref', 'HEAD')).trim()).toBe('refs/heads/main');
    expect((await git(repo, 'show', 'main:a.txt')).trim()).toBe('one\nthree');
    expect(await git(repo, 'show', 'main:.hgtags')).toContain(' v1.0');
    expect((await git(repo, 'show', 'branches/stable:b.txt')).trim()).toBe('stable\nfour');
    expect((await git(repo, 'show', 'v1.0:a.txt')).trim()).toBe('one');
    expect((await git(repo, 'show', 'feature:a.txt')).trim()).toBe('one\nthree');
    expect(await git(repo, 'config', '--list', '--local')).not.toContain('hg::');
    // A finished import does nothing more.
    expect(await adapter.importRawChunk(raw, 1, () => undefined)).toEqual(last);
  }, 30_000);

  it('lists the authors; the one without an email gets a made-up valid one', async () => {
    const adapter = mercurialAdapter();
    const raw = await job(one.url);
    await adapter.importRawChunk(raw, 600_000, () => undefined);
    const authors = await adapter.authors(raw);
    expect(authors).toHaveLength(3);
    expect(authors).toContainEqual({
      remoteId: 'bob <bob@mercurial.invalid>',
      remoteName: HG_FIXTURE_USERS.bob,
      name: 'bob',
      email: 'bob@mercurial.invalid',
    });
    expect(authors).toContainEqual({
      remoteId: HG_FIXTURE_USERS.carl,
      remoteName: HG_FIXTURE_USERS.carl,
      name: 'Carl Gauß',
      email: 'carl@example.org',
    });
    // The remote ids are the identities raw.git holds: what the rewrite step looks up.
    const identities = await git(rawRepositoryPath(raw.workDir), 'log', '--all', '--format=%an <%ae>');
    for (const author of authors) expect(identities).toContain(author.remoteId);
  }, 30_000);

  it('imports the chosen repository of an hgweb index', async () => {
    const raw = await job(web.url, { choice: { vcs: 'mercurial', humanName: 'beta', path: 'beta/' } });
    expect(await adapterFor('mercurial').importRawChunk(raw, 600_000, () => undefined)).toEqual({
      done: true,
      commitCount: 5,
      percent: 100,
    });
  }, 30_000);

  it('imports behind Basic auth; a wrong password fails with OriginAuthFailed, never on a command line', async () => {
    const adapter = mercurialAdapter();
    const seen: string[] = [];
    let running = true;
    const watcher = (async () => {
      while (running) {
        for (const pid of await readdir('/proc').catch(() => [])) {
          if (!/^\d+$/.test(pid)) continue;
          const line = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
          if (line.includes('hg')) seen.push(line);
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    const good = await job(locked.url, { credentials: AUTH });
    expect(await adapter.importRawChunk(good, 600_000, () => undefined)).toMatchObject({
      done: true,
      commitCount: 5,
    });
    const none = adapter.importRawChunk(await job(locked.url), 600_000, () => undefined);
    await expect(none).rejects.toThrow(OriginAuthFailed);
    await expect(none).rejects.toThrow('requires a username and password');
    const wrong = { ...AUTH, password: 'wrong-Secret-77' };
    const wrongJob = await job(locked.url, { credentials: wrong });
    const error = await adapter
      .importRawChunk(wrongJob, 600_000, () => undefined)
      .catch((caught: unknown) => caught);
    running = false;
    await watcher;
    expect(error).toBeInstanceOf(OriginAuthFailed);
    expect((error as Error).message).toBe('The origin refused the username and password');
    expect(`${(error as Error).message}${(error as Error).stack}`).not.toContain('wrong-Secret-77');
    expect(seen.some((line) => /\0pull\0/.test(line))).toBe(true);
    expect(seen.join('\n')).not.toContain(AUTH.password);
    expect(seen.join('\n')).not.toContain('wrong-Secret-77');
    // No config file holds the credentials: they reach hg on a file descriptor.
    expect((await readdir(join(good.workDir, 'home'))).filter((name) => name.startsWith('hgrc'))).toEqual([]);
  }, 30_000);
});

/** Every chunk until done (at most `limit`), with every progress value reported on the way. */
async function importAll(
  adapter: ReturnType<typeof mercurialAdapter>,
  raw: RawJob,
  budgetMs: number,
  limit = 30,
) {
  const reports: RawProgress[] = [];
  let chunks = 0;
  let last: Awaited<ReturnType<typeof adapter.importRawChunk>>;
  do {
    chunks += 1;
    last = await adapter.importRawChunk(raw, budgetMs, (progress) => reports.push(progress));
    reports.push(last);
  } while (!last.done && chunks < limit);
  return { last, chunks, reports };
}

const nonDecreasing = (values: readonly number[]) =>
  values.every((value, i) => i === 0 || value >= (values[i - 1] ?? 0));

describe('Mercurial progress, conversion ranges and limits', () => {
  let oneGo: RawJob;

  it('reports progress from real counts: monotonic, changesets as received, 100 at the end', async () => {
    const adapter = mercurialAdapter({ progressRefreshSeconds: 0 });
    oneGo = await job(`${bulk.url}/`);
    const { last, chunks, reports } = await importAll(adapter, oneGo, 600_000);
    expect(chunks).toBe(1);
    expect(last).toEqual({ done: true, commitCount: BULK_REVISIONS, percent: 100 });
    const percents = reports.map((report) => report.percent ?? 0);
    const counts = reports.map((report) => report.commitCount ?? 0);
    expect(nonDecreasing(percents)).toBe(true);
    expect(nonDecreasing(counts)).toBe(true);
    // The pull reports the changesets received so far against the origin's total (probed first) ...
    const pulling = reports.filter((report) => (report.commitCount ?? 0) < BULK_REVISIONS);
    expect(pulling.length).toBeGreaterThan(5);
    for (const report of pulling)
      expect(report.percent).toBe(Math.floor((50 * (report.commitCount ?? 0)) / BULK_REVISIONS));
    // ... and the conversion moves from 50 to 99 with the revisions converted.
    expect(new Set(percents.filter((percent) => percent > 50 && percent < 100)).size).toBeGreaterThanOrEqual(
      5,
    );
    const repo = rawRepositoryPath(oneGo.workDir);
    expect((await git(repo, 'rev-list', '--all', '--count')).trim()).toBe(String(BULK_REVISIONS));
    expect((await git(repo, 'for-each-ref', '--format=%(refname)')).trim().split('\n')).toEqual([
      'refs/heads/branches/stable',
      'refs/heads/main',
    ]);
    expect((await git(repo, 'ls-tree', '--name-only', 'branches/stable')).trim().split('\n')).toHaveLength(
      BULK_REVISIONS,
    );
  }, 60_000);

  it('imports an empty origin as an empty repository', async () => {
    const raw = await job(`${empty.url}/`);
    expect(await mercurialAdapter().importRawChunk(raw, 600_000, () => undefined)).toEqual({
      done: true,
      commitCount: 0,
      percent: 100,
    });
    expect((await git(rawRepositoryPath(raw.workDir), 'for-each-ref')).trim()).toBe('');
  }, 30_000);

  it('keeps every head of a branch: the tip is the branch, the others refs of their own', async () => {
    const raw = await job(`${forked.url}/`);
    expect(await mercurialAdapter().importRawChunk(raw, 600_000, () => undefined)).toMatchObject({
      done: true,
      commitCount: 3,
    });
    const repo = rawRepositoryPath(raw.workDir);
    const refs = (await git(repo, 'for-each-ref', '--format=%(refname)')).trim().split('\n');
    expect(refs).toHaveLength(2);
    expect(refs[0]).toMatch(/^refs\/heads\/hg\/default\/[0-9a-f]{12}$/);
    expect(refs[1]).toBe('refs/heads/main');
    const files = async (ref: string) => (await git(repo, 'ls-tree', '--name-only', ref)).trim().split('\n');
    expect(await files('main')).toEqual(['base.txt', 'two.txt']);
    expect(await files(refs[0] ?? '')).toEqual(['base.txt', 'one.txt']);
  }, 30_000);

  it('converts in ranges across chunks (marks carry the earlier ranges) to the very same commits', async () => {
    const adapter = mercurialAdapter({ hgPlan: { convertRevs: 200 } });
    const raw = await job(`${bulk.url}/`);
    const { last, chunks, reports } = await importAll(adapter, raw, 1);
    expect(last).toEqual({ done: true, commitCount: BULK_REVISIONS, percent: 100 });
    // One chunk pulls, then one per range of 200 revisions (the last one also writes the refs).
    expect(chunks).toBeGreaterThanOrEqual(4);
    expect(nonDecreasing(reports.map((report) => report.percent ?? 0))).toBe(true);
    const tips = (dir: string) => git(rawRepositoryPath(dir), 'rev-parse', 'main', 'branches/stable');
    expect(await tips(raw.workDir)).toBe(await tips(oneGo.workDir));
    // The marks stay for a sync, one per revision.
    const marks = await readFile(join(rawRepositoryPath(raw.workDir), 'hg-marks'), 'utf8');
    expect(marks.trim().split('\n')).toHaveLength(BULK_REVISIONS);
  }, 60_000);

  it('a conversion that does not fit its time limit fails readably once a single revision does not fit', async () => {
    const adapter = mercurialAdapter({ hgPlan: { convertTimeoutMs: 1 } });
    const raw = await job(`${one.url}/`);
    let error: unknown;
    for (let chunk = 0; chunk < 10 && error === undefined; chunk++) {
      const result = await adapter
        .importRawChunk(raw, 600_000, () => undefined)
        .catch((caught: unknown) => {
          error = caught;
        });
      expect(result?.done).not.toBe(true);
    }
    expect(error).toBeInstanceOf(OriginFailed);
    expect((error as Error).message).toBe(
      'Converting the Mercurial history to Git did not finish within the step time limit',
    );
  }, 60_000);

  it('IMPORT_MAX_OBJECTS: more revisions than objects allowed fail before any pull; more objects after conversion fail', async () => {
    const early = await job(`${one.url}/`);
    await expect(
      mercurialAdapter({ maxObjects: 4 }).importRawChunk(early, 600_000, () => undefined),
    ).rejects.toThrow(new OriginFailed('The repository has more objects than the import limit'));
    expect(
      await exec('hg', ['log', '-R', join(early.workDir, 'raw.hg'), '-T', '.'], {
        env: { PATH: process.env.PATH, HGRCPATH: '' },
      }),
    ).toMatchObject({ stdout: '' });
    // 5 revisions pass the early check; their commits, trees and blobs are more than 10 objects.
    await expect(
      mercurialAdapter({ maxObjects: 10 }).importRawChunk(await job(`${one.url}/`), 600_000, () => undefined),
    ).rejects.toThrow(new OriginFailed('The repository has more objects than the import limit'));
  }, 60_000);

  it('IMPORT_MAX_BYTES bounds raw.hg (the pull) and raw.git (the conversion)', async () => {
    // The sizes of the whole import above: raw.hg (about 220 kB) is smaller than raw.git (about 300 kB).
    const hgBytes = await directorySize(join(oneGo.workDir, 'raw.hg'));
    const gitBytes = await directorySize(rawRepositoryPath(oneGo.workDir));
    expect(gitBytes).toBeGreaterThan(hgBytes * 1.1);
    const small = mercurialAdapter({ maxBytes: Math.floor(hgBytes / 2) });
    await expect(small.importRawChunk(await job(`${bulk.url}/`), 600_000, () => undefined)).rejects.toThrow(
      new OriginFailed('The repository is larger than the import limit of 0 MiB'),
    );
    const medium = mercurialAdapter({ maxBytes: Math.floor((hgBytes + gitBytes) / 2) });
    const raw = await job(`${bulk.url}/`);
    await expect(medium.importRawChunk(raw, 600_000, () => undefined)).rejects.toThrow(
      new OriginFailed('The repository is larger than the import limit of 0 MiB'),
    );
    // The pull fitted; the conversion did not.
    expect(JSON.parse(await readFile(join(raw.workDir, 'raw-hg-state.json'), 'utf8'))).toMatchObject({
      pulled: true,
      pulledRevs: BULK_REVISIONS,
    });
  }, 60_000);
});

describe('Mercurial and the network guard', () => {
  const { resolve, dial, dialled } = stubNetwork({
    'hg.example': ['127.0.0.1'],
    'private.example': ['10.0.0.1'],
  });

  it('hg reaches the origin only through the guard (a name only the stub resolver knows)', async () => {
    const adapter = mercurialAdapter({ resolve, dial });
    const raw = await job(`http://hg.example:${one.port}/`);
    expect(await adapter.importRawChunk(raw, 600_000, () => undefined)).toMatchObject({
      done: true,
      commitCount: 5,
    });
    expect(dialled.some((target) => target.host === 'hg.example')).toBe(true);
  }, 30_000);

  it('refuses a forbidden address before any packet, in detection and import', async () => {
    const adapter = mercurialAdapter({ resolve, dial });
    const before = dialled.length;
    await expect(adapter.detect(access('http://private.example/repo'))).rejects.toThrow(ForbiddenAddress);
    await expect(
      adapter.importRawChunk(await job('http://private.example/repo'), 600_000, () => undefined),
    ).rejects.toThrow(ForbiddenAddress);
    await expect(adapter.detect(access('http://10.1.2.3/repo'))).rejects.toThrow(ForbiddenAddress);
    expect(dialled.slice(before)).toEqual([]);
  }, 30_000);
});
