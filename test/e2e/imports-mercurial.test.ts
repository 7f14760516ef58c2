import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OriginServer } from '#local/git-origins';
import { basicAuthProxy, makeHgFixture, serveHg } from '#local/hg-origins';
import { ENV } from '#shared/config';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient } from '#test/git-client';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';

/** Mercurial imports through the API and the real workflow, checked with `git clone` of the hosted repository. */

const LARGE_FILE_BYTES = 200_000;
process.env[ENV.largeFileBytes] = String(LARGE_FILE_BYTES);
const SECRET = { username: 'hg-user', password: 'hg-Secret-4711' };

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let origin: OriginServer;
let large: OriginServer;
let locked: OriginServer;
let index: OriginServer;
let clashing: OriginServer;
let originRepo: string;
let largeRepo: string;

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);

let repoCount = 0;
async function newRepo(): Promise<string> {
  const name = `hg-${++repoCount}`;
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${token}` },
    body: JSON.stringify({ name }),
  });
  expect(created.status).toBe(201);
  return name;
}

/** Polls the import until `done` holds for it; fails with the last import seen. */
async function until(repo: string, done: (body: Record<string, unknown>) => boolean, timeoutMs = 40_000) {
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    last = (await api('GET', `/repos/octocat/${repo}/import`)).body;
    if (done(last)) return last;
    if (last.status === 'error') break;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`import of ${repo} did not get there: ${JSON.stringify(last)}`);
}
const status = (wanted: string) => (body: Record<string, unknown>) => body.status === wanted;
const hosted = (repo: string) => `${stack.webUrl}/octocat/${repo}.git`;

/** Branches `a` and `a/?` (as in fast-export's smoke test): Git cannot hold both under their names. */
async function makeClashingBranches(repo: string): Promise<void> {
  const hg = (...args: string[]) =>
    promisify(execFile)('hg', args, { cwd: repo, env: { ...process.env, HGPLAIN: '1', HGRCPATH: '' } });
  await mkdir(repo, { recursive: true });
  await hg('init');
  for (const branch of ['default', 'a', 'a/?']) {
    if (branch !== 'default') await hg('branch', branch);
    await writeFile(join(repo, 'f.txt'), `${branch}\n`);
    if (branch === 'default') await hg('add', 'f.txt');
    await hg('commit', '-m', branch, '-u', 'Ada <ada@example.com>', '-d', '1700000000 0');
  }
}

/**
 * The revision map against the origin: every changeset id of `hg log`, in revision order, mapped to
 * a commit of `clone` with that changeset's first message line and files (`hg files`; the
 * `.gitattributes` of Git LFS set apart).
 */
async function expectMapMatchesOrigin(repo: string, clone: string, origin = originRepo) {
  const hg = async (...args: string[]) =>
    (
      await promisify(execFile)('hg', args, {
        cwd: origin,
        env: { ...process.env, HGPLAIN: '1', HGRCPATH: '' },
      })
    ).stdout;
  const changesets = (await hg('log', '-r', 'all()', '-T', '{node}\t{desc|firstline}\n'))
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split('\t') as [string, string]);
  const page = await api('GET', `/repos/octocat/${repo}/import/revisions?per_page=100`);
  expect(page.status).toBe(200);
  expect(page.headers.get('link') ?? '').not.toContain('rel="next"');
  const map = page.body as { origin_revision: string; commit: string }[];
  expect(map.map((entry) => entry.origin_revision)).toEqual(changesets.map(([node]) => node));
  for (const [index, [node, subject]] of changesets.entries()) {
    const commit = map[index]?.commit ?? '';
    const shown = await git(['log', '-1', '--format=%s', commit], { cwd: clone });
    expect(shown.stdout.trim(), node).toBe(subject);
    const files = await git(['ls-tree', '-r', '--name-only', commit], { cwd: clone });
    const tree = files.stdout.trim().split('\n');
    expect(
      tree.filter((path) => path !== '.gitattributes'),
      node,
    ).toEqual((await hg('files', '-r', node)).trim().split('\n'));
  }
}

beforeAll(async () => {
  stack = await startTestStack();
  git = await gitClient();
  const root = await mkdtemp(join(tmpdir(), 'hg-import-origin-'));
  const several = join(root, 'several');
  originRepo = join(root, 'repo');
  largeRepo = join(root, 'large');
  await Promise.all([
    makeHgFixture(join(several, 'alpha')),
    makeHgFixture(join(several, 'beta')),
    makeHgFixture(originRepo),
    makeHgFixture(largeRepo, {
      largeFile: { path: 'assets/video.bin', bytes: LARGE_FILE_BYTES + 50_000 },
    }),
    makeClashingBranches(join(root, 'clashing')),
  ]);
  [origin, large, index, clashing] = await Promise.all([
    serveHg({ repo: originRepo }),
    serveHg({ repo: largeRepo }),
    serveHg({ root: several }),
    serveHg({ repo: join(root, 'clashing') }),
  ]);
  locked = await basicAuthProxy(origin, SECRET);
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await Promise.all([origin?.close(), large?.close(), locked?.close(), index?.close(), clashing?.close()]);
});

describe('a Mercurial import through the API and the workflow', () => {
  it('detects Mercurial, imports branches, bookmarks and tags, and finds the authors', async () => {
    const created = await fetch(`${stack.baseUrl}/user/repos`, {
      method: 'POST',
      headers: { Authorization: `token ${token}` },
      body: JSON.stringify({ name: 'from-hg' }),
    });
    expect(created.status).toBe(201);
    const started = await api('PUT', '/repos/octocat/from-hg/import', { vcs_url: `${origin.url}/` });
    expect(started.status).toBe(201);

    const deadline = Date.now() + 45_000;
    let last: Record<string, unknown> = {};
    while (Date.now() < deadline) {
      last = (await api('GET', '/repos/octocat/from-hg/import')).body;
      if (last.status === 'complete' || last.status === 'error') break;
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    expect(last).toMatchObject({ vcs: 'mercurial', status: 'complete', authors_count: 3 });

    const authors = (await api('GET', '/repos/octocat/from-hg/import/authors')).body as {
      name: string;
      email: string;
    }[];
    expect(authors.map((author) => `${author.name} <${author.email}>`).sort()).toEqual([
      'Ada Lovelace <ada@example.com>',
      'Carl Gauß <carl@example.org>',
      'bob <bob@mercurial.invalid>',
    ]);

    const dir = await mkdtemp(join(tmpdir(), 'hg-import-clone-'));
    const clone = await git(['clone', '--quiet', `${stack.webUrl}/octocat/from-hg.git`, dir]);
    expect(clone.code, clone.stderr).toBe(0);
    const refs = await git(['for-each-ref', '--format=%(refname)', 'refs/remotes', 'refs/tags'], {
      cwd: dir,
    });
    expect(refs.stdout.trim().split('\n')).toEqual([
      'refs/remotes/origin/HEAD',
      'refs/remotes/origin/branches/stable',
      'refs/remotes/origin/feature',
      'refs/remotes/origin/main',
      'refs/tags/v1.0',
    ]);
    expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe('one\nthree\n');
    const show = async (spec: string) => (await git(['show', spec], { cwd: dir })).stdout;
    expect(await show('origin/branches/stable:b.txt')).toBe('stable\nfour\n');
    expect(await show('origin/feature:a.txt')).toBe('one\nthree\n');
    expect(await show('v1.0:a.txt')).toBe('one\n');
    // The synthetic email is in the published history (the rewrite applied it).
    expect((await git(['log', '--all', '--format=%an <%ae>'], { cwd: dir })).stdout).toContain(
      'bob <bob@mercurial.invalid>',
    );
    await expectMapMatchesOrigin('from-hg', dir);
  }, 60_000);
});

describe('the import report', () => {
  it('lists the branches that were renamed, and the Mercurial kinds looked for, once complete; 404 without an import; preview only', async () => {
    const repo = await newRepo();
    expect((await api('GET', `/repos/octocat/${repo}/import/report`)).status).toBe(404);
    const plain = await fetch(`${stack.baseUrl}/repos/octocat/${repo}/import/report`, {
      headers: { Authorization: `token ${token}` },
    });
    expect(plain.status).toBe(415);
    await api('PUT', `/repos/octocat/${repo}/import`, { vcs_url: `${clashing.url}/`, vcs: 'mercurial' });
    await until(repo, status('complete'));
    const report = await api('GET', `/repos/octocat/${repo}/import/report`);
    expect(report.status).toBe(200);
    expect(report.body).toMatchObject({
      status: 'complete',
      renamed_refs_count: 1,
      // Looked for and not found in this history: listed as none, not left out.
      closed_branches_count: 0,
      closed_branches: [],
      hg_subrepos_count: 0,
      hg_subrepos: [],
      authorless_commits_count: 0,
      authorless_commits: [],
      large_files_action: 'none',
      large_files_count: 0,
      large_files: [],
    });
    const [renamed] = report.body.renamed_refs as Record<string, string>[];
    expect(renamed).toMatchObject({ kind: 'branch', origin_name: 'a/?' });
    // The ref it names is the one the hosted repository holds that history under.
    const refs = (await git(['ls-remote', hosted(repo)])).stdout;
    expect(refs).toContain(`\t${renamed?.ref}\n`);
    expect(refs).toContain('\trefs/heads/branches/a\n');
  }, 60_000);
});

describe('a Mercurial origin behind Basic auth', () => {
  it('detection_needs_auth and auth_failed both resume with credentials; the password is never shown', async () => {
    const [unknown, refused] = [await newRepo(), await newRepo()];
    await api('PUT', `/repos/octocat/${unknown}/import`, { vcs_url: `${locked.url}/` });
    await api('PUT', `/repos/octocat/${refused}/import`, {
      vcs_url: `${locked.url}/`,
      vcs: 'mercurial',
      vcs_username: SECRET.username,
      vcs_password: 'not-the-Password-99',
    });
    const [asked, failed] = await Promise.all([
      until(unknown, status('detection_needs_auth')),
      until(refused, status('auth_failed')),
    ]);
    expect(JSON.stringify([asked, failed])).not.toContain('not-the-Password-99');
    expect(failed).toMatchObject({ vcs: 'mercurial', status: 'auth_failed' });

    for (const repo of [unknown, refused]) {
      const resumed = await api('PATCH', `/repos/octocat/${repo}/import`, {
        vcs_username: SECRET.username,
        vcs_password: SECRET.password,
      });
      expect(resumed.status).toBe(200);
      expect(JSON.stringify(resumed.body)).not.toContain(SECRET.password);
    }
    const done = await Promise.all([until(unknown, status('complete')), until(refused, status('complete'))]);
    for (const body of done) {
      expect(body).toMatchObject({ vcs: 'mercurial', status: 'complete', authors_count: 3 });
      expect(JSON.stringify(body)).not.toContain(SECRET.password);
    }
    const dir = await mkdtemp(join(tmpdir(), 'hg-locked-clone-'));
    expect((await git(['clone', '--quiet', hosted(refused), dir])).code).toBe(0);
    expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe('one\nthree\n');
  }, 60_000);
});

describe('a Mercurial origin with a large file', () => {
  it('waits for the LFS choice; opt_in stores it in Git LFS with an author mapped, opt_out drops it', async () => {
    const [kept, dropped] = [await newRepo(), await newRepo()];
    for (const repo of [kept, dropped])
      await api('PUT', `/repos/octocat/${repo}/import`, { vcs_url: `${large.url}/`, vcs: 'mercurial' });
    const waiting = await until(kept, (body) => body.has_large_files === true && body.import_percent === 100);
    expect(waiting).toMatchObject({ status: 'importing', use_lfs: 'undecided', large_files_count: 1 });
    expect((await api('GET', `/repos/octocat/${kept}/import/large_files`)).body).toEqual([
      expect.objectContaining({ path: 'assets/video.bin', size: LARGE_FILE_BYTES + 50_000 }),
    ]);

    // An author mapped before the push: the published history carries the new identity.
    const authors = (await api('GET', `/repos/octocat/${kept}/import/authors`)).body as {
      id: number;
      name: string;
    }[];
    const carl = authors.find((author) => author.name === 'Carl Gauß');
    const mapped = await api('PATCH', `/repos/octocat/${kept}/import/authors/${carl?.id}`, {
      name: 'Carl Friedrich Gauss',
      email: 'gauss@goettingen.example',
    });
    expect(mapped.status).toBe(200);
    expect((await api('PATCH', `/repos/octocat/${kept}/import/lfs`, { use_lfs: 'opt_in' })).status).toBe(200);
    await until(dropped, (body) => body.has_large_files === true);
    expect((await api('PATCH', `/repos/octocat/${dropped}/import/lfs`, { use_lfs: 'opt_out' })).status).toBe(
      200,
    );
    await Promise.all([until(kept, status('complete')), until(dropped, status('complete'))]);
    // The report says what became of the large file under each choice.
    for (const [repo, action] of [
      [kept, 'moved_to_lfs'],
      [dropped, 'removed'],
    ] as const)
      expect((await api('GET', `/repos/octocat/${repo}/import/report`)).body).toMatchObject({
        status: 'complete',
        renamed_refs_count: 0,
        large_files_action: action,
        large_files_count: 1,
        large_files: [expect.objectContaining({ path: 'assets/video.bin' })],
      });

    const dir = await mkdtemp(join(tmpdir(), 'hg-lfs-clone-'));
    const clone = await git(['clone', '--quiet', hosted(kept), dir]);
    expect(clone.code, clone.stderr).toBe(0);
    expect((await stat(join(dir, 'assets/video.bin'))).size).toBe(LARGE_FILE_BYTES + 50_000);
    expect(await readFile(join(dir, '.gitattributes'), 'utf8')).toContain('filter=lfs');
    const names = (await git(['log', '--all', '--format=%an <%ae>'], { cwd: dir })).stdout;
    expect(names).toContain('Carl Friedrich Gauss <gauss@goettingen.example>');
    expect(names).not.toContain('Carl Gauß');
    // The map went through both rewrites: the author mapping, then the move to Git LFS.
    await expectMapMatchesOrigin(kept, dir, largeRepo);

    const mirror = await mkdtemp(join(tmpdir(), 'hg-opt-out-'));
    expect((await git(['clone', '-q', '--mirror', hosted(dropped), mirror])).code).toBe(0);
    const sizes = await git(['cat-file', '--batch-all-objects', '--batch-check=%(objectsize)'], {
      cwd: mirror,
    });
    expect(Math.max(...sizes.stdout.trim().split('\n').map(Number))).toBeLessThanOrEqual(LARGE_FILE_BYTES);
  }, 60_000);
});

describe('an hgweb index of several repositories', () => {
  it('offers them as project_choices, imports the one chosen, restarts, and cancels', async () => {
    const repo = await newRepo();
    expect((await api('PUT', `/repos/octocat/${repo}/import`, { vcs_url: index.url })).status).toBe(201);
    const waiting = await until(repo, status('detection_found_multiple'));
    const choices = waiting.project_choices as { vcs: string; human_name: string }[];
    expect(choices.map((choice) => [choice.vcs, choice.human_name]).sort()).toEqual([
      ['mercurial', 'alpha'],
      ['mercurial', 'beta'],
    ]);
    const beta = choices.find((choice) => choice.human_name === 'beta');
    expect((await api('PATCH', `/repos/octocat/${repo}/import`, beta)).status).toBe(200);
    await until(repo, status('complete'));
    const first = (await git(['ls-remote', hosted(repo)])).stdout;
    expect(first).toMatch(/refs\/heads\/main$/m);

    // Restart: a new attempt of the same project ends with the same refs.
    const restarted = await api('PATCH', `/repos/octocat/${repo}/import`, {});
    expect(restarted.status).toBe(200);
    expect(restarted.body.status).not.toBe('complete');
    await until(repo, status('complete'));
    expect((await git(['ls-remote', hosted(repo)])).stdout).toBe(first);

    // Cancel: the import and the repository's contents go; a new import works at once.
    expect((await api('DELETE', `/repos/octocat/${repo}/import`)).status).toBe(204);
    expect((await api('GET', `/repos/octocat/${repo}/import/report`)).status).toBe(404);
    expect((await api('GET', `/repos/octocat/${repo}/import`)).status).toBe(404);
    expect((await git(['ls-remote', hosted(repo)])).stdout).toBe('');
    expect((await api('PUT', `/repos/octocat/${repo}/import`, { vcs_url: origin.url })).status).toBe(201);
    await until(repo, status('complete'));
  }, 90_000);
});
