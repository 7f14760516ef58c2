import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SvnHttpServer, serveSvnHttp } from '#local/svn-http-origins';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient, remoteRefs } from '#test/git-client';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';
import { expectMapFollowsLog } from '#test/svn-revision-log';

/**
 * A sync of a followed Subversion origin (mod_dav_svn on 127.0.0.1) through the API and the real
 * workflow, on git's test dump t9151 (trunk, nine branches, a tag, 44 revisions) split in two:
 * the sync fetches only the revisions after the import's, and the hosted repository equals a
 * fresh import of the whole origin, id for id. An origin whose history was replaced is imported
 * afresh by the sync.
 */

const exec = promisify(execFile);
const DUMP = join(import.meta.dirname, '../fixtures/svn/git-t9151-svn-mergeinfo.dump');
/** The import sees revisions 0..SPLIT; the sync the rest (44 in the dump) and one more. */
const SPLIT = 20;

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let work: string;
let parent: string;
let http: SvnHttpServer;

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);
const env = () => ({ PATH: process.env.PATH, HOME: work, LC_ALL: 'C' });
const originPath = () => join(parent, 'followed');
const originUrl = () => http.url('followed');

async function svnadmin(...args: string[]) {
  await exec('svnadmin', args, { env: env() });
}
async function svn(...args: string[]) {
  await exec('svn', ['--non-interactive', '--username', 'grace', ...args], { env: env(), cwd: work });
}
const loadRange = (range: string) => svnadmin('load', '-q', '-r', range, '-F', DUMP, originPath());

async function until(repo: string, wanted: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    last = (await api('GET', `/repos/octocat/${repo}/import`)).body;
    if (last.status === wanted) return last;
    if (last.status === 'error') break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`import of ${repo} did not reach ${wanted}: ${JSON.stringify(last)}`);
}

let repoCount = 0;
/** A new repository importing the origin as it is now, once complete. */
async function imported(): Promise<string> {
  const repo = `svn-followed-${++repoCount}`;
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${token}` },
    body: JSON.stringify({ name: repo }),
  });
  expect(created.status).toBe(201);
  const put = await api('PUT', `/repos/octocat/${repo}/import`, { vcs_url: originUrl(), vcs: 'subversion' });
  expect(put.status, JSON.stringify(put.body)).toBe(201);
  await until(repo, 'complete');
  return repo;
}

async function synced(repo: string): Promise<void> {
  const started = await api('POST', `/repos/octocat/${repo}/import/sync`);
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  await until(repo, 'complete');
}

const hostedRefs = (repo: string) => remoteRefs(git, `${stack.webUrl}/octocat/${repo}.git`);

/** Every page of the revision map. */
async function revisionMap(repo: string): Promise<{ origin_revision: string; commit: string }[]> {
  const page = await api('GET', `/repos/octocat/${repo}/import/revisions?per_page=100`);
  expect(page.status).toBe(200);
  expect(page.headers.get('link') ?? '').not.toContain('rel="next"');
  return page.body;
}

/** The import report: everything but what names the repository or a time. */
async function findings(repo: string): Promise<Record<string, unknown>> {
  const report = (await api('GET', `/repos/octocat/${repo}/import/report`)).body as Record<string, unknown>;
  expect(Object.keys(report).length).toBeGreaterThan(0);
  return Object.fromEntries(
    Object.entries(report).filter(
      ([key, value]) => !key.endsWith('_at') && !(typeof value === 'string' && value.includes(repo)),
    ),
  );
}

/** The revisions mod_dav_svn replayed to the importer (svnrdump asks one `replay` per revision). */
const replayed = async () => (await http.operations()).filter((line) => /^replay /.test(line)).length;

/** The hosted repository, its revision map and its report equal a fresh import's of the origin. */
async function expectSameAsFreshImport(repo: string) {
  const fresh = await imported();
  expect(await hostedRefs(repo)).toEqual(await hostedRefs(fresh));
  expect(await revisionMap(repo)).toEqual(await revisionMap(fresh));
  expect(await findings(repo)).toEqual(await findings(fresh));
}

beforeAll(async () => {
  stack = await startTestStack();
  git = await gitClient();
  work = await mkdtemp(join(tmpdir(), 'svn-sync-e2e-'));
  parent = join(work, 'repos');
  await mkdir(parent);
  await svnadmin('create', originPath());
  await loadRange(`0:${SPLIT}`);
  // The origin is replaced in place below: Apache must not serve the old one from its cache.
  http = await serveSvnHttp({ parentPath: parent, noCache: true });
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await http?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('syncing a followed Subversion origin', () => {
  let repo: string;

  it('mirrors and converts only the revisions after the import, and equals a fresh import id for id', async () => {
    repo = await imported();
    const before = await hostedRefs(repo);
    expect((await api('PUT', `/repos/octocat/${repo}/import/sync`, { interval_minutes: null })).status).toBe(
      200,
    );

    // The origin moves on: the rest of the dump, then a branch deleted.
    await loadRange(`${SPLIT + 1}:44`);
    await svn('rm', '-m', 'Drop the b1 branch', `file://${originPath()}/branches/b1`);
    const replayedBefore = await replayed();
    await synced(repo);

    // Only revisions 21..45 were fetched; a whole re-import would replay all 45 (0 has no changes).
    expect(await replayed()).toBe(replayedBefore + (45 - SPLIT));
    const after = await hostedRefs(repo);
    expect(after).not.toEqual(before);
    expect(after.some((line) => line.endsWith(' refs/heads/b1'))).toBe(false);
    expect(after.some((line) => line.endsWith(' refs/tags/backups/b1@45'))).toBe(true);
    // Every revision that wrote a commit is in the map, up to the new ones.
    const map = await revisionMap(repo);
    expect(map.some((entry) => Number(entry.origin_revision) > SPLIT)).toBe(true);
    // Each maps to the commit it made (r45, which only deleted b1, to b1's last), on both sides
    // of the split: the branches and the tag the sync brought included.
    const clone = await mkdtemp(join(work, 'clone-'));
    const cloned = await git(['clone', '-q', '--mirror', `${stack.webUrl}/octocat/${repo}.git`, clone]);
    expect(cloned.code, cloned.stderr).toBe(0);
    await expectMapFollowsLog({
      map: new Map(map.map((entry) => [Number(entry.origin_revision), entry.commit])),
      clone,
      originUrl: `file://${originPath()}`,
      work,
      name: 'synced t9151',
    });
    await expectSameAsFreshImport(repo);
  }, 120_000);

  it('imports the origin afresh when its history was replaced (same repository, another revision 45)', async () => {
    // The origin re-created from the same dump (the same UUID), then another revision 45 and 46.
    await rename(originPath(), join(work, 'replaced'));
    await svnadmin('create', originPath());
    await loadRange('0:44');
    await svn('rm', '-m', 'Drop the b2 branch instead', `file://${originPath()}/branches/b2`);
    await svn('mkdir', '-m', 'A new branch', `file://${originPath()}/branches/late`);
    const replayedBefore = await replayed();
    await synced(repo);

    // The whole history was fetched again (revision 0 has no changes to replay).
    expect(await replayed()).toBe(replayedBefore + 46);
    const refs = await hostedRefs(repo);
    expect(refs.some((line) => line.endsWith(' refs/heads/b1'))).toBe(true);
    expect(refs.some((line) => line.endsWith(' refs/heads/b2'))).toBe(false);
    await expectSameAsFreshImport(repo);
  }, 120_000);
});
