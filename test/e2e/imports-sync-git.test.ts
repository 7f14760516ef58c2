import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient, remoteRefs } from '#test/git-client';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';
import { type TcpRelay, tcpRelay } from '#test/tcp-relay';

/*
 * Following a Git origin on real material (issue 27, items 2 and 3): the Lua project's history up
 * to 5.2.0 (`test/fixtures/git/README.md`) split in two. The origin first holds the history up to
 * the 5.1 release; the repository imports it and follows; then the origin gains the rest, and a
 * sync publishes it, fetching only what is new (counted in bytes through a relay in front of the
 * origin). Then branches and tags are deleted and a branch is force-pushed in the origin.
 */

const exec = promisify(execFile);
const BUNDLE = fileURLToPath(new URL('../fixtures/git/lua-5.2.0.bundle', import.meta.url));

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let root: string;
let origin: string;
let http: OriginServer;
let relay: TcpRelay | undefined;
/** Bytes the origin sent through the relay (what the importer fetched). */
let relayed = 0;
let relayUrl: string;
/** The whole history's refs, `<id> <ref>`. */
let wholeRefs: string[];

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);
const env = () => ({ PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: root });
const originGit = async (...args: string[]) =>
  (await exec('git', ['--git-dir', origin, ...args], { env: env(), maxBuffer: 64 << 20 })).stdout.trim();
const tip = (ref: string) => originGit('rev-parse', ref);

/** Refs of a repository as `<id> <ref>` lines, sorted: branches and tags, or the backups. */
async function refsOf(url: string, which: 'published' | 'backups' = 'published'): Promise<string[]> {
  if (which === 'published') return (await remoteRefs(git, url)).sort();
  const listed = await git(['ls-remote', url, 'refs/backups/*']);
  expect(listed.code, listed.stderr).toBe(0);
  return listed.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.replace('\t', ' '))
    .sort();
}

async function until(name: string, wanted: string, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    last = (await api('GET', `/repos/octocat/${name}/import`)).body;
    if (last.status === wanted) return last;
    if (last.status === 'error' || last.status === 'complete') break;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`import of ${name} did not reach ${wanted}: ${JSON.stringify(last)}`);
}

async function importInto(name: string) {
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${token}` },
    body: JSON.stringify({ name }),
  });
  expect(created.status).toBe(201);
  const started = await api('PUT', `/repos/octocat/${name}/import`, { vcs_url: relayUrl, vcs: 'git' });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  return until(name, 'complete');
}

/** Syncs now and waits; answers the bytes fetched from the origin and the sync resource. */
async function synced(name: string) {
  relayed = 0;
  const started = await api('POST', `/repos/octocat/${name}/import/sync`);
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  await until(name, 'complete');
  return { bytes: relayed, sync: (await api('GET', `/repos/octocat/${name}/import/sync`)).body };
}

/** Every entry of a repository's revision map, in origin order. */
async function revisionMap(name: string): Promise<unknown[]> {
  const entries: unknown[] = [];
  for (let page = 1; ; page++) {
    const { status, body } = await api(
      'GET',
      `/repos/octocat/${name}/import/revisions?per_page=100&page=${page}`,
    );
    expect(status).toBe(200);
    entries.push(...body);
    if (body.length < 100) return entries;
  }
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'sync-git-'));
  origin = join(root, 'lua.git');
  await exec('git', ['init', '--bare', '--quiet', origin], { env: env() });
  await originGit('fetch', '--quiet', BUNDLE, 'refs/*:refs/*');
  await originGit('symbolic-ref', 'HEAD', 'refs/heads/master');
  wholeRefs = (await originGit('for-each-ref', '--format=%(objectname) %(refname)')).split('\n').sort();
  // The early part: master at the 5.1 release, with the tags it holds, and two more branches.
  const later = (await originGit('tag', '--no-merged', 'v5.1')).split('\n').filter(Boolean);
  for (const tag of later) await originGit('update-ref', '-d', `refs/tags/${tag}`);
  await originGit('update-ref', 'refs/heads/master', 'v5.1');
  await originGit('update-ref', 'refs/heads/gone', 'v5.0');
  await originGit('update-ref', 'refs/heads/forced', 'v5.1~5');
  http = await serveGitHttp(root);
  relay = await tcpRelay(http.port, {
    onOriginData: (bytes) => {
      relayed += bytes;
    },
  });
  relayUrl = `http://127.0.0.1:${relay.port}/lua.git`;
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

describe('syncing a followed Git origin', () => {
  const hosted = () => `${stack.webUrl}/octocat/lua.git`;
  const originUrl = () => `${http.url}/lua.git`;

  it('fetches only what the origin gained, and publishes what a fresh import of the whole origin publishes, id for id', async () => {
    await importInto('lua');
    expect(await refsOf(hosted())).toEqual(await refsOf(originUrl()));
    const following = await api('PUT', '/repos/octocat/lua/import/sync', { interval_minutes: null });
    expect(following.status).toBe(200);
    expect(following.body.keep_deleted_refs).toBe(false);
    const before = await refsOf(hosted());

    // The origin gains the rest of the history: master moves on to 5.2.0 with the later tags.
    for (const line of wholeRefs) {
      const [id, ref] = line.split(' ') as [string, string];
      await originGit('update-ref', ref, id);
    }
    const { bytes: syncBytes, sync } = await synced('lua');
    const after = await refsOf(hosted());
    expect(after).toEqual(await refsOf(originUrl()));
    // Refs that did not move kept their ids.
    expect(after).toEqual(
      expect.arrayContaining(before.filter((line) => !line.endsWith(' refs/heads/master'))),
    );
    const gained = Number(await originGit('rev-list', '--count', 'v5.1..master'));
    expect(sync).toMatchObject({
      state: 'following',
      origin_revision: await tip('master'),
      last_sync: { status: 'succeeded', new_commits: gained, deleted_refs: [], rewritten_refs: [] },
    });

    relayed = 0;
    await importInto('lua-fresh');
    const freshBytes = relayed;
    expect(await refsOf(`${stack.webUrl}/octocat/lua-fresh.git`)).toEqual(after);
    expect(await revisionMap('lua')).toEqual(await revisionMap('lua-fresh'));
    // Only what was new travelled: a sync that imports afresh fetches the whole history again.
    expect(syncBytes, `sync ${syncBytes} B, fresh import ${freshBytes} B`).toBeLessThan(freshBytes / 2);
  }, 120_000);

  it('deletes what the origin deleted and moves a force-pushed branch, keeping its old tip as a backup', async () => {
    const gone = await tip('refs/heads/gone');
    const forcedBefore = await tip('refs/heads/forced');
    const tag = await tip('refs/tags/v1.2');
    await originGit('update-ref', '-d', 'refs/heads/gone');
    await originGit('update-ref', '-d', 'refs/tags/v1.2');
    // A force-push: `forced` now points at a history without its old tip.
    const forcedAfter = await tip('v4.0');
    await originGit('update-ref', 'refs/heads/forced', forcedAfter);

    const { sync } = await synced('lua');
    expect(await refsOf(hosted())).toEqual(await refsOf(originUrl()));
    const backup = `refs/backups/heads/forced@${forcedBefore}`;
    expect(await refsOf(hosted(), 'backups')).toEqual([`${forcedBefore} ${backup}`]);
    expect(sync.last_sync).toEqual({
      status: 'succeeded',
      new_commits: 0,
      deleted_refs: [
        { ref: 'refs/heads/gone', old_tip: gone, new_tip: null, backup_ref: null },
        { ref: 'refs/tags/v1.2', old_tip: tag, new_tip: null, backup_ref: null },
      ],
      rewritten_refs: [
        { ref: 'refs/heads/forced', old_tip: forcedBefore, new_tip: forcedAfter, backup_ref: backup },
      ],
    });
    // The backup is an ordinary ref a clone can fetch.
    const clone = await mkdtemp(join(root, 'clone-'));
    expect((await git(['clone', '-q', '--bare', hosted(), clone])).code).toBe(0);
    const fetched = await git(['fetch', '-q', 'origin', `${backup}:refs/heads/restored`], { cwd: clone });
    expect(fetched.code, fetched.stderr).toBe(0);
    expect((await git(['rev-parse', 'refs/heads/restored'], { cwd: clone })).stdout.trim()).toBe(
      forcedBefore,
    );
  }, 60_000);

  it('keeps deleted branches and tags as backups when asked, and validates keep_deleted_refs', async () => {
    for (const wrong of ['yes', 1, null]) {
      const refused = await api('PUT', '/repos/octocat/lua/import/sync', {
        interval_minutes: null,
        keep_deleted_refs: wrong,
      });
      expect(refused.status).toBe(422);
      expect(refused.body.errors).toEqual([
        expect.objectContaining({ resource: 'ImportSync', field: 'keep_deleted_refs' }),
      ]);
    }
    const kept = await api('PUT', '/repos/octocat/lua/import/sync', {
      interval_minutes: null,
      keep_deleted_refs: true,
    });
    expect(kept.status).toBe(200);
    expect(kept.body.keep_deleted_refs).toBe(true);
    // Absent: unchanged.
    expect(
      (await api('PUT', '/repos/octocat/lua/import/sync', { interval_minutes: 60 })).body.keep_deleted_refs,
    ).toBe(true);

    const forced = await tip('refs/heads/forced');
    const tag = await tip('refs/tags/v2.1');
    const backupsBefore = await refsOf(hosted(), 'backups');
    await originGit('update-ref', '-d', 'refs/heads/forced');
    await originGit('update-ref', '-d', 'refs/tags/v2.1');

    const { sync } = await synced('lua');
    expect(await refsOf(hosted())).toEqual(await refsOf(originUrl()));
    const branchBackup = `refs/backups/heads/forced@${forced}`;
    const tagBackup = `refs/backups/tags/v2.1@${tag}`;
    expect(await refsOf(hosted(), 'backups')).toEqual(
      [...backupsBefore, `${forced} ${branchBackup}`, `${tag} ${tagBackup}`].sort(),
    );
    expect(sync.last_sync).toEqual({
      status: 'succeeded',
      new_commits: 0,
      deleted_refs: [
        { ref: 'refs/heads/forced', old_tip: forced, new_tip: null, backup_ref: branchBackup },
        { ref: 'refs/tags/v2.1', old_tip: tag, new_tip: null, backup_ref: tagBackup },
      ],
      rewritten_refs: [],
    });
  }, 60_000);

  it("follows the origin's HEAD to another branch (asked while the sync fetches)", async () => {
    const branch = 'release-5.1';
    await originGit('update-ref', `refs/heads/${branch}`, 'v5.1');
    await originGit('symbolic-ref', 'HEAD', `refs/heads/${branch}`);

    await synced('lua');
    const head = await git(['ls-remote', '--symref', hosted(), 'HEAD']);
    expect(head.stdout).toContain(`ref: refs/heads/${branch}\tHEAD`);
    expect(await refsOf(hosted())).toEqual(await refsOf(originUrl()));
    await originGit('symbolic-ref', 'HEAD', 'refs/heads/master');
  }, 60_000);
});
