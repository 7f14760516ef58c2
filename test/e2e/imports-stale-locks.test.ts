import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { makeHgFixture, serveHg } from '#local/hg-origins';
import { ENV } from '#shared/config';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient, remoteRefs } from '#test/git-client';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';

/*
 * The lock files a worker killed while its git or hg held them leaves in the attempt's directory
 * (a SIGKILL runs no clean-up): git's `<file>.lock` of a ref, of `packed-refs`, of the marks file
 * fast-import was writing, of the job's `.gitconfig`; hg's `.hg/store/lock` and `.hg/wlock`, symbolic
 * links naming their holder as `host/pid-namespace:pid`, here a dead sandbox's namespace. The next
 * step of the same directory (a retry, or the sync that takes the directory over) runs through the
 * real workflow, and must publish the origin's new commits as if nothing had died.
 */

const exec = promisify(execFile);

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let root: string;
const servers: OriginServer[] = [];

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);

async function until(repo: string, wanted: string, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    last = (await api('GET', `/repos/octocat/${repo}/import`)).body;
    if (last.status === wanted) return last;
    if (last.status === 'error' || last.status === 'complete') break;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`import of ${repo} did not reach ${wanted}: ${JSON.stringify(last)}`);
}

async function imported(name: string, vcs: string, url: string): Promise<string> {
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${token}` },
    body: JSON.stringify({ name }),
  });
  expect(created.status).toBe(201);
  const started = await api('PUT', `/repos/octocat/${name}/import`, { vcs_url: url, vcs });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  await until(name, 'complete');
  return `${stack.webUrl}/octocat/${name}.git`;
}

async function synced(name: string): Promise<void> {
  expect((await api('PUT', `/repos/octocat/${name}/import/sync`, { interval_minutes: null })).status).toBe(
    200,
  );
  const started = await api('POST', `/repos/octocat/${name}/import/sync`);
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  await until(name, 'complete');
}

/** The import's one attempt directory (the last import left it for the syncs). */
async function attemptDirOf(name: string): Promise<string> {
  const base = join(process.env[ENV.importWorkDir] ?? '', 'octocat', name);
  const attempts = (await readdir(base)).filter((entry) => /^\d+$/.test(entry));
  expect(attempts).toHaveLength(1);
  return join(base, attempts[0] ?? '');
}

/** Git's lock files as a killed git leaves them: created whole, empty or half-written. */
async function gitLocks(dir: string, extra: readonly string[]): Promise<void> {
  const raw = join(dir, 'raw.git');
  const refs = (await exec('git', ['--git-dir', raw, 'for-each-ref', '--format=%(refname)'])).stdout
    .split('\n')
    .filter(Boolean);
  expect(refs.length).toBeGreaterThan(0);
  for (const ref of refs) await writeFile(join(raw, `${ref}.lock`), '');
  await writeFile(join(raw, 'packed-refs.lock'), '');
  await writeFile(join(dir, 'home', '.gitconfig.lock'), '[user]\n');
  for (const file of extra) await writeFile(join(dir, file), '');
}

/** An hg lock of a process in another PID namespace (a sandbox that died with its hg). */
async function hgLock(path: string): Promise<void> {
  await rm(path, { force: true });
  await symlink(`${hostname()}/effff00d:7`, path);
}

beforeAll(async () => {
  stack = await startTestStack();
  git = await gitClient();
  root = await mkdtemp(join(tmpdir(), 'stale-locks-'));
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await Promise.all(servers.map((server) => server.close()));
  if (root) await rm(root, { recursive: true, force: true });
});

describe('a step that finds the locks of a killed git or hg in its directory', () => {
  it('syncs a Git origin through a raw.git whose refs, packed-refs and job config a dead git had locked', async () => {
    const origin = join(root, 'origins', 'project.git');
    await makeFixtureRepository(origin, { commits: 4, branches: 1, annotatedTags: 1 });
    const server = await serveGitHttp(join(root, 'origins'));
    servers.push(server);
    const url = `${server.url}/project.git`;
    const hosted = await imported('git-locked', 'git', url);
    const dir = await attemptDirOf('git-locked');
    await gitLocks(dir, []);

    const work = join(root, 'git-change');
    await exec('git', ['clone', '-q', origin, work]);
    await writeFile(join(work, 'new.txt'), 'after the death\n');
    await exec('git', ['-C', work, 'add', 'new.txt']);
    await exec('git', [
      '-C',
      work,
      '-c',
      'user.name=Ada',
      '-c',
      'user.email=ada@example.com',
      'commit',
      '-qm',
      'new',
    ]);
    await exec('git', ['-C', work, 'push', '-q', 'origin', 'HEAD']);
    await synced('git-locked');

    const fresh = await imported('git-fresh', 'git', url);
    expect((await remoteRefs(git, hosted)).sort()).toEqual((await remoteRefs(git, fresh)).sort());
  }, 300_000);

  it('syncs a Mercurial origin through a raw.hg a dead hg had locked and a raw.git a dead fast-import had locked', async () => {
    const origin = join(root, 'hg');
    await makeHgFixture(origin);
    const server = await serveHg({ repo: origin });
    servers.push(server);
    const hosted = await imported('hg-locked', 'mercurial', server.url);
    const dir = await attemptDirOf('hg-locked');
    await gitLocks(dir, [join('raw.git', 'hg-marks.new.lock')]);
    await hgLock(join(dir, 'raw.hg', '.hg', 'store', 'lock'));
    await hgLock(join(dir, 'raw.hg', '.hg', 'wlock'));

    const hg = (...args: string[]) =>
      exec('hg', args, {
        cwd: origin,
        env: { ...process.env, HGPLAIN: '1', HGRCPATH: '', HGUSER: 'Ada <ada@example.com>' },
      });
    await mkdir(join(origin, 'more'), { recursive: true });
    await writeFile(join(origin, 'more', 'c.txt'), 'after the death\n');
    await hg('add', '-q', 'more/c.txt');
    await hg('commit', '-q', '-m', 'after the death', '-d', '1700000900 0');
    await synced('hg-locked');

    const fresh = await imported('hg-fresh', 'mercurial', server.url);
    expect((await remoteRefs(git, hosted)).sort()).toEqual((await remoteRefs(git, fresh)).sort());
  }, 300_000);
});
