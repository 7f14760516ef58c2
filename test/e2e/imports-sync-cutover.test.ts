import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient, remoteRefs } from '#test/git-client';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';
import { type TcpRelay, tcpRelay } from '#test/tcp-relay';

/*
 * The cut-over while a sync runs (issue 35, item 6): the cut-over is the point after which the
 * service writes nothing to the repository. A sync attempt against an origin that answers 6 s late
 * is under way when the owner asks to cut over: the cut-over is refused (409, as a sync now is)
 * until the attempt has ended; then the owner's push after the cut-over stays.
 */

const exec = promisify(execFile);
type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let root: string;
let origin: string;
let http: OriginServer;
let relay: TcpRelay | undefined;
let relayUrl: string;
/** How long the relay waits before it connects a client to the origin. */
let originDelayMs = 0;

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);
const env = () => ({ PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: root });
const originGit = async (...args: string[]) =>
  (await exec('git', ['--git-dir', origin, ...args], { env: env() })).stdout.trim();

async function settled(name: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    last = (await api('GET', `/repos/octocat/${name}/import`)).body;
    if (last.status === 'error' || last.status === 'complete') return last;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`import of ${name} did not settle: ${JSON.stringify(last)}`);
}

/** A new commit on the origin's `main` and a new branch, as the origin's people push them. */
async function originMoves() {
  const tree = await originGit('rev-parse', 'main^{tree}');
  const parent = await originGit('rev-parse', 'main');
  const commit = (
    await exec('git', ['--git-dir', origin, 'commit-tree', tree, '-p', parent, '-m', 'origin moves on'], {
      env: {
        ...env(),
        GIT_AUTHOR_NAME: 'Origin',
        GIT_AUTHOR_EMAIL: 'origin@example.com',
        GIT_COMMITTER_NAME: 'Origin',
        GIT_COMMITTER_EMAIL: 'origin@example.com',
      },
    })
  ).stdout.trim();
  await originGit('update-ref', 'refs/heads/main', commit);
  await originGit('update-ref', 'refs/heads/from-origin', commit);
  return commit;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'sync-cutover-'));
  origin = join(root, 'small.git');
  await makeFixtureRepository(origin, { commits: 4, branches: 1, annotatedTags: 0 });
  http = await serveGitHttp(root);
  relay = await tcpRelay(http.port, { delayMs: () => originDelayMs });
  relayUrl = `http://127.0.0.1:${relay.port}/small.git`;
  stack = await startTestStack();
  git = await gitClient();
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await http?.close();
  await relay?.close();
  await rm(root, { recursive: true, force: true });
});

describe('the cut-over while a sync runs', () => {
  it('is refused with 409 until the attempt has ended; the owner’s push after it stays', async () => {
    const name = 'cutover';
    const created = await fetch(`${stack.baseUrl}/user/repos`, {
      method: 'POST',
      headers: { Authorization: `token ${token}` },
      body: JSON.stringify({ name }),
    });
    expect(created.status).toBe(201);
    expect(
      (await api('PUT', `/repos/octocat/${name}/import`, { vcs_url: relayUrl, vcs: 'git' })).status,
    ).toBe(201);
    expect((await settled(name)).status).toBe('complete');
    const url = `/repos/octocat/${name}/import/sync`;
    expect((await api('PUT', url, { interval_minutes: null })).status).toBe(200);
    const originTip = await originMoves();
    originDelayMs = 6000;

    expect((await api('POST', url)).status).toBe(202);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const during = await api('DELETE', url);

    expect(during.status, JSON.stringify(during.body)).toBe(409);
    expect(during.body.message).toMatch(/under way/);
    expect((await api('GET', url)).body.state).toBe('following');
    const ended = await settled(name);
    expect(ended.status).toBe('complete');
    originDelayMs = 0;
    const hosted = `${stack.webUrl}/octocat/${name}.git`;
    expect(await remoteRefs(git, hosted)).toContain(`${originTip} refs/heads/main`);

    const cut = await api('DELETE', url);
    expect(cut.status).toBe(200);
    expect(cut.body.state).toBe('cut_over');
    // The owner's own work, pushed after the cut-over, is what the repository keeps.
    const work = await mkdtemp(join(root, 'work-'));
    expect((await git(['clone', '-q', hosted, work], { password: token })).code).toBe(0);
    await writeFile(join(work, 'OWNER.md'), 'mine\n');
    expect((await git(['add', '.'], { cwd: work })).code).toBe(0);
    expect((await git(['commit', '-qm', 'owner work'], { cwd: work })).code).toBe(0);
    const pushed = await git(['push', 'origin', 'main'], { cwd: work, password: token });
    expect(pushed.code, pushed.stderr).toBe(0);
    const ownerTip = (await git(['rev-parse', 'HEAD'], { cwd: work })).stdout.trim();
    expect((await api('POST', url)).status).toBe(422);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(await remoteRefs(git, hosted)).toContain(`${ownerTip} refs/heads/main`);
    const backups = await git(['ls-remote', hosted, 'refs/backups/*'], { password: token });
    expect(backups.stdout).toBe('');
  }, 120_000);
});
