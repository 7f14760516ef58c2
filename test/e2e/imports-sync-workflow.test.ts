import { mkdtemp, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient, remoteRefs } from '#test/git-client';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';

/**
 * A sync of a followed Git origin through the API and the real workflow (the ASL file run by the
 * local Step Functions endpoint, git on 127.0.0.1): history added at the origin after the import
 * is published, and every commit published before keeps its id.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let root: string;
let origin: OriginServer;

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);

async function until(repo: string, wanted: string, timeoutMs = 60_000) {
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

beforeAll(async () => {
  stack = await startTestStack();
  git = await gitClient();
  root = await mkdtemp(join(tmpdir(), 'sync-origins-'));
  await makeFixtureRepository(join(root, 'followed.git'), { commits: 20, branches: 2, annotatedTags: 2 });
  origin = await serveGitHttp(root);
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await origin?.close();
});

describe('syncing a followed Git origin', () => {
  it('publishes a commit added at the origin after the import, keeping every earlier id', async () => {
    const created = await fetch(`${stack.baseUrl}/user/repos`, {
      method: 'POST',
      headers: { Authorization: `token ${token}` },
      body: JSON.stringify({ name: 'followed' }),
    });
    expect(created.status).toBe(201);
    const originUrl = `${origin.url}/followed.git`;
    const hosted = `${stack.webUrl}/octocat/followed.git`;
    expect(
      (await api('PUT', '/repos/octocat/followed/import', { vcs_url: originUrl, vcs: 'git' })).status,
    ).toBe(201);
    await until('followed', 'complete');
    const before = await remoteRefs(git, hosted);
    expect(before).toEqual(await remoteRefs(git, originUrl));
    const following = await api('PUT', '/repos/octocat/followed/import/sync', { interval_minutes: null });
    expect(following.status).toBe(200);
    // The newest origin revision published: the revision map's last entry.
    const mapped = (await api('GET', '/repos/octocat/followed/import/revisions?per_page=100')).body as {
      origin_revision: string;
    }[];
    expect(mapped.length).toBeGreaterThan(0);
    expect(following.body.origin_revision).toBe(mapped.at(-1)?.origin_revision);

    // The origin moves on: one commit on its default branch.
    const work = await mkdtemp(join(root, 'work-'));
    expect((await git(['clone', '-q', join(root, 'followed.git'), work])).code).toBe(0);
    await writeFile(join(work, 'after-import.txt'), 'written after the import\n');
    expect((await git(['add', '.'], { cwd: work })).code).toBe(0);
    expect((await git(['commit', '-qm', 'after the import'], { cwd: work })).code).toBe(0);
    const pushed = await git(['push', '-q', 'origin', 'HEAD'], { cwd: work });
    expect(pushed.code, pushed.stderr).toBe(0);
    const newTip = (await git(['rev-parse', 'HEAD'], { cwd: work })).stdout.trim();
    const branch = (await git(['rev-parse', '--abbrev-ref', 'HEAD'], { cwd: work })).stdout.trim();

    const started = await api('POST', '/repos/octocat/followed/import/sync');
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    await until('followed', 'complete');

    const after = await remoteRefs(git, hosted);
    expect(after).toEqual(await remoteRefs(git, originUrl));
    expect(after).toContain(`${newTip} refs/heads/${branch}`);
    // Every ref but the branch that moved is where it was, id for id.
    const moved = `refs/heads/${branch}`;
    expect(after.filter((line) => !line.endsWith(` ${moved}`))).toEqual(
      before.filter((line) => !line.endsWith(` ${moved}`)),
    );
    // The moved branch's old tip is the new commit's parent: history before it kept its ids.
    const oldTip = before.find((line) => line.endsWith(` ${moved}`))?.split(' ')[0];
    const clone = await mkdtemp(join(root, 'clone-'));
    expect((await git(['clone', '-q', hosted, clone])).code).toBe(0);
    expect((await git(['rev-parse', `${newTip}^`], { cwd: clone })).stdout.trim()).toBe(oldTip);

    const sync = await api('GET', '/repos/octocat/followed/import/sync');
    expect(sync.body).toMatchObject({
      state: 'following',
      origin_revision: newTip,
      last_sync: { status: 'succeeded', new_commits: 1 },
    });
    expect(Date.parse(sync.body.last_synced_at)).toBeGreaterThanOrEqual(
      Date.parse(sync.body.following_since),
    );

    // The origin vanishes: the sync fails, the hosted repository is untouched, last_sync says why.
    await rename(join(root, 'followed.git'), join(root, 'gone.git'));
    expect((await api('POST', '/repos/octocat/followed/import/sync')).status).toBe(202);
    await until('followed', 'error');
    expect(await remoteRefs(git, hosted)).toEqual(after);
    const failed = await api('GET', '/repos/octocat/followed/import/sync');
    expect(failed.body).toMatchObject({
      state: 'following',
      last_synced_at: sync.body.last_synced_at,
      last_sync: { status: 'failed', new_commits: 0, error_message: expect.any(String) },
    });
    // A failed sync may be tried again.
    await rename(join(root, 'gone.git'), join(root, 'followed.git'));
    expect((await api('POST', '/repos/octocat/followed/import/sync')).status).toBe(202);
    await until('followed', 'complete');
    expect((await api('GET', '/repos/octocat/followed/import/sync')).body.last_sync).toEqual({
      status: 'succeeded',
      new_commits: 0,
      deleted_refs: [],
      rewritten_refs: [],
    });
  });
});
