import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { DescribeExecutionCommand, SFNClient } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSvnRepository, type SvnRepository } from '#local/svn-fixtures';
import { type SvnHttpServer, serveSvnHttp } from '#local/svn-http-origins';
import { type SvnServer, serveSvn } from '#local/svn-origins';
import { ENV } from '#shared/config';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient, remoteRefs } from '#test/git-client';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';

/**
 * Subversion imports through the API and the real workflow, from Apache `mod_dav_svn` (http) and
 * `svnserve` (svn://) on 127.0.0.1, checked with `git clone` of the hosted repository against an
 * `svn export` of each origin branch and tag.
 */

const LARGE_FILE_BYTES = 200_000;
process.env[ENV.largeFileBytes] = String(LARGE_FILE_BYTES);

const exec = promisify(execFile);
const HTTP_USER = { username: 'http-user', password: 'pw-Dav-Svn-never-shown-1' };
const SVN_USER = { username: 'svn-user', password: 'pw-Svnserve-never-shown-2' };

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let sfn: SFNClient;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let work: string;
let parent: string;
let http: SvnHttpServer;
let svnserve: SvnServer;
let lockedSvnserve: SvnServer;
const repos: Record<'std' | 'large' | 'multi', SvnRepository> = {} as never;

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);

let repoCount = 0;
async function newRepo(): Promise<string> {
  const name = `from-svn-${++repoCount}`;
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${token}` },
    body: JSON.stringify({ name }),
  });
  expect(created.status).toBe(201);
  return name;
}

async function until(repo: string, done: (body: Record<string, unknown>) => boolean, timeoutMs = 40_000) {
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    last = (await api('GET', `/repos/octocat/${repo}/import`)).body;
    if (done(last)) return last;
    if (last?.status === 'error') break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`import of ${repo} did not get there: ${JSON.stringify(last)}`);
}
const status = (wanted: string) => (body: Record<string, unknown>) => body?.status === wanted;
const hosted = (repo: string) => `${stack.webUrl}/octocat/${repo}.git`;

/** Every file under `dir` → its content, paths relative and sorted. */
async function filesUnder(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (at: string) => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      if (entry.name === '.git') continue;
      const path = join(at, entry.name);
      if (entry.isDirectory()) await walk(path);
      else out[relative(dir, path)] = await readFile(path, 'utf8');
    }
  };
  await walk(dir);
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/** `svn export` of a path of a fixture repository (over file://, the origin's own truth). */
async function originFiles(repo: SvnRepository, path: string): Promise<Record<string, string>> {
  const dir = join(await mkdtemp(join(work, 'export-')), 'tree');
  await exec('svn', ['export', '--quiet', '--non-interactive', `${repo.url}/${path}`, dir], {
    env: { PATH: process.env.PATH, HOME: work, LC_ALL: 'C' },
  });
  return filesUnder(dir);
}

/**
 * Two projects, `team@2` and `other`, each with a trunk holding a README. svn reads `@2` as a peg
 * revision (even percent-encoded), so the import must escape it to find `team@2` at all.
 */
async function makePegRepository(path: string) {
  const env = { PATH: process.env.PATH, HOME: work, LC_ALL: 'C' };
  const svn = (...args: string[]) =>
    exec('svn', ['--non-interactive', '--username', 'ada', ...args], { env, cwd: work });
  await exec('svnadmin', ['create', path], { env });
  const url = `file://${path}`;
  await svn('mkdir', '--parents', '-m', 'Layout', `${url}/team%402/trunk`, `${url}/other/trunk`);
  for (const [project, text] of [
    ['team%402', 'team at 2\n'],
    ['other', 'other\n'],
  ] as const) {
    const file = join(await mkdtemp(join(work, 'peg-')), 'README');
    await writeFile(file, text);
    await svn('import', '-m', `README of ${project}`, file, `${url}/${project}/trunk/README`);
  }
}

/** A clone of the hosted repository with `ref` checked out: its files, `.gitignore` set apart. */
async function hostedFiles(clone: string, ref: string) {
  const checkout = await git(['checkout', '-q', '--detach', ref], { cwd: clone });
  expect(checkout.code, checkout.stderr).toBe(0);
  const { '.gitignore': gitignore, ...files } = await filesUnder(clone);
  return { files, gitignore };
}

async function cloneOf(repo: string): Promise<string> {
  const dir = await mkdtemp(join(work, 'clone-'));
  const clone = await git(['clone', '-q', hosted(repo), dir]);
  expect(clone.code, clone.stderr).toBe(0);
  return dir;
}

/** Branches, tags, tips and `.gitignore` of the hosted standard-layout project against the origin. */
async function expectSameAsOrigin(repo: string, origin: SvnRepository, project = '') {
  const at = (path: string) => (project === '' ? path : `${project}/${path}`);
  const dir = await cloneOf(repo);
  const refs = await git(['for-each-ref', '--format=%(refname) %(objecttype)', 'refs/remotes', 'refs/tags'], {
    cwd: dir,
  });
  expect(refs.stdout.trim().split('\n')).toEqual([
    'refs/remotes/origin/HEAD commit',
    'refs/remotes/origin/feature commit',
    'refs/remotes/origin/main commit',
    'refs/tags/v1.0 tag',
  ]);
  for (const [ref, path] of [
    ['origin/main', 'trunk'],
    ['origin/feature', 'branches/feature'],
    ['v1.0', 'tags/v1.0'],
  ] as const) {
    const { files, gitignore } = await hostedFiles(dir, ref);
    expect(files, ref).toEqual(await originFiles(origin, at(path)));
    expect(gitignore, ref).toMatch(/^\/?\*\.log$/m);
  }
  const mode = await git(['ls-tree', 'origin/main', 'run.sh'], { cwd: dir });
  expect(mode.stdout).toMatch(/^100755 /);
  const merges = await git(['rev-list', '--merges', '--count', 'origin/main'], { cwd: dir });
  expect(Number(merges.stdout.trim())).toBeGreaterThanOrEqual(1);
  return dir;
}

/** The revision map of a small import: one page of up to 100 entries, with no next page. */
async function revisionMap(repo: string): Promise<{ origin_revision: string; commit: string }[]> {
  const page = await api('GET', `/repos/octocat/${repo}/import/revisions?per_page=100`);
  expect(page.status).toBe(200);
  expect(page.headers.get('link') ?? '').not.toContain('rel="next"');
  return page.body;
}

/**
 * The branch or tag folder (`trunk`, `branches/X`, `tags/X`) each origin revision changed, from
 * `svn log -v --xml` (trunk first when a revision changed several).
 */
async function changedBranches(origin: SvnRepository): Promise<Map<number, string>> {
  const { stdout } = await exec('svn', ['log', '-v', '--xml', '--non-interactive', origin.url], {
    env: { PATH: process.env.PATH, HOME: work, LC_ALL: 'C' },
  });
  const changed = new Map<number, string>();
  for (const [, revision, body = ''] of stdout.matchAll(
    /<logentry\s+revision="(\d+)">([\s\S]*?)<\/logentry>/g,
  )) {
    const folders = [
      ...body.matchAll(/<path[^>]*>\/(trunk|(?:branches|tags)\/[^/<]+)(?:\/[^<]*)?<\/path>/g),
    ].map((match) => match[1] ?? '');
    const folder = folders.includes('trunk') ? 'trunk' : folders[0];
    if (folder !== undefined) changed.set(Number(revision), folder);
  }
  return changed;
}

/**
 * The revision map against the origin: exactly the revisions that changed a branch or tag, in
 * revision order, each mapped to a hosted commit whose files are `svn export` of that folder at
 * that revision (`.gitignore`, which carries `svn:ignore`, set apart).
 */
async function expectMapMatchesOrigin(repo: string, origin: SvnRepository, clone: string) {
  const changed = await changedBranches(origin);
  const map = await revisionMap(repo);
  expect(map.map((entry) => entry.origin_revision)).toEqual(
    [...changed.keys()].sort((a, b) => a - b).map(String),
  );
  for (const entry of map) {
    const folder = changed.get(Number(entry.origin_revision)) ?? '';
    const { files } = await hostedFiles(clone, entry.commit);
    expect(files, `r${entry.origin_revision} ${folder}`).toEqual(
      await originFiles(origin, `${folder}@${entry.origin_revision}`),
    );
  }
}

beforeAll(async () => {
  stack = await startTestStack();
  sfn = new SFNClient({
    endpoint: stack.stepFunctionsEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  git = await gitClient();
  work = await mkdtemp(join(tmpdir(), 'svn-e2e-'));
  parent = join(work, 'repos');
  await mkdir(parent);
  // Fixtures are built once, side by side, then moved under one parent (fsfs keeps no absolute paths).
  const specs = {
    std: {},
    large: { largeFileBytes: LARGE_FILE_BYTES + 50_000 },
    multi: { projects: ['alpha', 'beta'] },
  } as const;
  await Promise.all(
    Object.entries(specs).map(async ([name, spec]) => {
      const made = await makeSvnRepository(join(work, `make-${name}`), spec);
      await rename(made.path, join(parent, name));
      repos[name as keyof typeof repos] = {
        ...made,
        path: join(parent, name),
        url: `file://${join(parent, name)}`,
      };
    }),
  );
  await makePegRepository(join(parent, 'peg'));
  [http, svnserve, lockedSvnserve] = await Promise.all([
    serveSvnHttp({ parentPath: parent, users: { [HTTP_USER.username]: HTTP_USER.password } }),
    serveSvn(parent),
    serveSvn(parent, { users: { [SVN_USER.username]: SVN_USER.password } }),
  ]);
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await http?.close();
  await svnserve?.close();
  await lockedSvnserve?.close();
});

// Every test has a repository of its own: they run side by side (the file takes half the time).
describe.concurrent('Subversion imports', () => {
  describe('a Subversion import through the API and the workflow', () => {
    it('detects Subversion over mod_dav_svn (http), imports trunk, branches and tags, maps authors', async () => {
      const repo = await newRepo();
      const started = await api('PUT', `/repos/octocat/${repo}/import`, { vcs_url: http.url('std') });
      expect(started.status).toBe(201);
      const done = await until(repo, status('complete'));
      expect(done).toMatchObject({ vcs: 'subversion', status_text: 'Done', authors_count: 3 });
      await expectSameAsOrigin(repo, repos.std);

      const authors = (await api('GET', `/repos/octocat/${repo}/import/authors`)).body as {
        id: number;
        name: string;
        email: string;
        remote_id: string;
      }[];
      const uuid = repos.std.uuid;
      expect(authors.map((author) => `${author.name} <${author.email}>`).sort()).toEqual([
        `ada <ada@${uuid}>`,
        `bob <bob@${uuid}>`,
        `carl <carl@${uuid}>`,
      ]);
      const ada = authors.find((author) => author.name === 'ada');
      const mapped = await api('PATCH', `/repos/octocat/${repo}/import/authors/${ada?.id}`, {
        name: 'Ada Lovelace',
        email: 'ada@example.org',
      });
      expect(mapped.status).toBe(200);
      await until(repo, status('complete'));
      const dir = await cloneOf(repo);
      const names = await git(['log', '--all', '--format=%an <%ae>'], { cwd: dir });
      expect(names.stdout).toContain('Ada Lovelace <ada@example.org>');
      expect(names.stdout).toContain(`bob <bob@${uuid}>`);
      expect(names.stdout).not.toContain(`ada@${uuid}`);
      // The map was rewritten with the history: every revision names a commit of this clone.
      await expectMapMatchesOrigin(repo, repos.std, dir);
    }, 60_000);

    it('detects Subversion over svn:// (svnserve), imports the same history; a restart imports it again', async () => {
      const repo = await newRepo();
      await api('PUT', `/repos/octocat/${repo}/import`, { vcs_url: svnserve.url('std') });
      await until(repo, status('complete'));
      expect((await api('GET', `/repos/octocat/${repo}/import`)).body.vcs).toBe('subversion');
      await expectSameAsOrigin(repo, repos.std);
      const before = await remoteRefs(git, hosted(repo));

      const restarted = await api('PATCH', `/repos/octocat/${repo}/import`, {});
      expect(restarted.status).toBe(200);
      expect(restarted.body.status).toBe('importing');
      await until(repo, status('complete'));
      const second = `arn:aws:states:us-east-1:123456789012:execution:SourceImport:octocat.${repo}.attempt-2`;
      // The Complete step ends its execution a moment after it writes `complete` (events, hooks).
      const describe = async () =>
        (await sfn.send(new DescribeExecutionCommand({ executionArn: second }))).status;
      const deadline = Date.now() + 10_000;
      while ((await describe()) === 'RUNNING' && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await describe()).toBe('SUCCEEDED');
      // The same revisions convert to the same commits.
      expect(await remoteRefs(git, hosted(repo))).toEqual(before);
    }, 60_000);

    it('offers the projects of a multi-project root and imports only the chosen one', async () => {
      const repo = await newRepo();
      await api('PUT', `/repos/octocat/${repo}/import`, { vcs_url: http.url('multi') });
      const found = await until(repo, status('detection_found_multiple'));
      const choices = found.project_choices as { vcs: string; human_name: string }[];
      expect(choices.map((choice) => choice.human_name).sort()).toEqual(['alpha', 'beta']);
      expect(choices.every((choice) => choice.vcs === 'subversion')).toBe(true);
      const chosen = await api(
        'PATCH',
        `/repos/octocat/${repo}/import`,
        choices.find((choice) => choice.human_name === 'beta'),
      );
      expect(chosen.status).toBe(200);
      await until(repo, status('complete'));
      const dir = await expectSameAsOrigin(repo, repos.multi, 'beta');
      const readme = await git(['show', 'origin/main:README'], { cwd: dir });
      expect(readme.stdout).toBe('Project beta\ntrunk change\n');
      const everything = await git(['log', '--all', '--name-only', '--format='], { cwd: dir });
      expect(everything.stdout).not.toMatch(/alpha/);
    }, 60_000);
  });

  describe('paths with an @', () => {
    it('offers and imports a project named team@2 (svn would read @2 as a revision)', async () => {
      const repo = await newRepo();
      await api('PUT', `/repos/octocat/${repo}/import`, { vcs_url: svnserve.url('peg') });
      const found = await until(repo, status('detection_found_multiple'));
      const choices = found.project_choices as { vcs: string; human_name: string }[];
      expect(choices.map((choice) => choice.human_name).sort()).toEqual(['other', 'team@2']);
      const chosen = await api(
        'PATCH',
        `/repos/octocat/${repo}/import`,
        choices.find((choice) => choice.human_name === 'team@2'),
      );
      expect(chosen.status).toBe(200);
      await until(repo, status('complete'));
      const dir = await cloneOf(repo);
      const readme = await git(['show', 'origin/main:README'], { cwd: dir });
      expect(readme.stdout).toBe('team at 2\n');
    }, 60_000);
  });

  describe('credentials', () => {
    it('detection_needs_auth at a private mod_dav_svn location, then credentials: complete', async () => {
      const repo = await newRepo();
      await api('PUT', `/repos/octocat/${repo}/import`, { vcs_url: http.url('std', 'private') });
      await until(repo, status('detection_needs_auth'));
      const resumed = await api('PATCH', `/repos/octocat/${repo}/import`, {
        vcs_username: HTTP_USER.username,
        vcs_password: HTTP_USER.password,
      });
      expect(resumed.status).toBe(200);
      expect(resumed.body.status).toBe('detecting');
      const done = await until(repo, status('complete'));
      expect(done.vcs).toBe('subversion');
      await expectSameAsOrigin(repo, repos.std);
    }, 60_000);

    it('auth_failed for wrong svnserve credentials (no password in the answer), then the right ones: complete', async () => {
      const repo = await newRepo();
      const wrong = 'Wrong-Password-Never-Shown-3';
      await api('PUT', `/repos/octocat/${repo}/import`, {
        vcs_url: lockedSvnserve.url('std'),
        vcs: 'subversion',
        vcs_username: SVN_USER.username,
        vcs_password: wrong,
      });
      const failed = await until(repo, status('auth_failed'));
      expect(JSON.stringify(failed)).not.toContain(wrong);
      expect(
        (
          await api('PATCH', `/repos/octocat/${repo}/import`, {
            vcs_username: SVN_USER.username,
            vcs_password: SVN_USER.password,
          })
        ).status,
      ).toBe(200);
      const done = await until(repo, status('complete'));
      expect(JSON.stringify(done)).not.toContain(SVN_USER.password);
      await expectSameAsOrigin(repo, repos.std);
    }, 60_000);

    it('auth_failed for wrong mod_dav_svn credentials, without the password in the answer', async () => {
      const repo = await newRepo();
      const wrong = 'Wrong-Dav-Password-Never-Shown-4';
      await api('PUT', `/repos/octocat/${repo}/import`, {
        vcs_url: http.url('std', 'private'),
        vcs: 'subversion',
        vcs_username: HTTP_USER.username,
        vcs_password: wrong,
      });
      const failed = await until(repo, status('auth_failed'));
      expect(JSON.stringify(failed)).not.toContain(wrong);
    }, 60_000);
  });

  describe('large files', () => {
    it('waits for the LFS choice, then stores the file in Git LFS (opt_in)', async () => {
      const repo = await newRepo();
      await api('PUT', `/repos/octocat/${repo}/import`, {
        vcs_url: svnserve.url('large'),
        vcs: 'subversion',
      });
      const waiting = await until(repo, (b) => b.has_large_files === true && b.import_percent === 100);
      expect(waiting).toMatchObject({ status: 'importing', use_lfs: 'undecided', large_files_count: 1 });
      const files = (await api('GET', `/repos/octocat/${repo}/import/large_files`)).body;
      expect(files).toEqual([expect.objectContaining({ path: 'big.bin', size: LARGE_FILE_BYTES + 50_000 })]);
      expect((await api('PATCH', `/repos/octocat/${repo}/import/lfs`, { use_lfs: 'opt_in' })).status).toBe(
        200,
      );
      await until(repo, status('complete'));
      const dir = await cloneOf(repo);
      expect((await stat(join(dir, 'big.bin'))).size).toBe(LARGE_FILE_BYTES + 50_000);
      expect(await readFile(join(dir, '.gitattributes'), 'utf8')).toContain('filter=lfs');
    }, 60_000);

    it('leaves the large file out with opt_out', async () => {
      const repo = await newRepo();
      await api('PUT', `/repos/octocat/${repo}/import`, { vcs_url: http.url('large'), vcs: 'subversion' });
      await until(repo, (b) => b.has_large_files === true);
      await api('PATCH', `/repos/octocat/${repo}/import/lfs`, { use_lfs: 'opt_out' });
      await until(repo, status('complete'));
      const dir = await mkdtemp(join(work, 'opt-out-'));
      expect((await git(['clone', '-q', '--mirror', hosted(repo), dir])).code).toBe(0);
      const objects = await git(['cat-file', '--batch-all-objects', '--batch-check=%(objectsize)'], {
        cwd: dir,
      });
      expect(Math.max(...objects.stdout.trim().split('\n').map(Number))).toBeLessThanOrEqual(
        LARGE_FILE_BYTES,
      );
    }, 60_000);
  });

  describe('cancel and refusals', () => {
    it('cancels mid-import: the execution stops, nothing is published, a new import works', async () => {
      const repo = await newRepo();
      await api('PUT', `/repos/octocat/${repo}/import`, { vcs_url: http.url('std'), vcs: 'subversion' });
      await until(repo, (b) => b.status === 'importing');
      const first = `arn:aws:states:us-east-1:123456789012:execution:SourceImport:octocat.${repo}.attempt-1`;
      expect((await api('DELETE', `/repos/octocat/${repo}/import`)).status).toBe(204);
      expect((await sfn.send(new DescribeExecutionCommand({ executionArn: first }))).status).toBe('ABORTED');
      // The stopped attempt's task may still finish its step; its writes lose their condition.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect((await api('GET', `/repos/octocat/${repo}/import`)).status).toBe(404);
      expect(await remoteRefs(git, hosted(repo))).toEqual([]);
      expect(
        (await api('PUT', `/repos/octocat/${repo}/import`, { vcs_url: svnserve.url('std') })).status,
      ).toBe(201);
      await until(repo, status('complete'));
    }, 60_000);

    it('refuses svn:// to a forbidden address at PUT (422), before any packet', async () => {
      // A listener on 127.0.0.2 (loopback, but not an allowed origin address) counts connections.
      let connections = 0;
      const trap: Server = createServer((socket) => {
        connections++;
        socket.destroy();
      });
      await new Promise<void>((resolve) => trap.listen(0, '127.0.0.2', resolve));
      const port = (trap.address() as { port: number }).port;
      try {
        for (const vcs_url of [
          `svn://127.0.0.2:${port}/std`,
          `svn://[::ffff:127.0.0.2]:${port}/std`,
          `svn://localhost:${port}/std`,
          'svn://10.0.0.1/std',
          'svn://169.254.169.254/std',
        ]) {
          for (const vcs of [undefined, 'subversion']) {
            const repo = await newRepo();
            const refused = await api('PUT', `/repos/octocat/${repo}/import`, { vcs_url, vcs });
            expect(refused.status, vcs_url).toBe(422);
            expect(refused.body.errors[0]).toMatchObject({ resource: 'Import', field: 'vcs_url' });
            expect((await api('GET', `/repos/octocat/${repo}/import`)).status).toBe(404);
          }
        }
        expect(connections).toBe(0);
      } finally {
        await new Promise((resolve) => trap.close(resolve));
      }
    });
  });
});
