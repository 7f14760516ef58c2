import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OriginServer } from '#local/git-origins';
import { hgFront, serveHg } from '#local/hg-origins';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient, remoteRefs } from '#test/git-client';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';

/**
 * Syncs of followed Mercurial origins through the API and the real workflow (`hg serve` on
 * 127.0.0.1), on Mercurial's own test bundles (test/fixtures/hg): the origin first holds part of a
 * bundle, then gains the rest, new commits, a tag, a closed branch and bookmark changes; or it
 * strips a head and commits anew. After each sync the hosted refs equal those of a fresh import of
 * the whole origin, id for id, and the revision map lists every changeset.
 */

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'hg');
const NULL_NODE = '0'.repeat(40);

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let root: string;
const servers: OriginServer[] = [];

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);

const hg = async (repo: string, ...args: string[]) =>
  (
    await promisify(execFile)('hg', args, {
      cwd: repo,
      env: { ...process.env, HGPLAIN: '1', HGRCPATH: '', HGUSER: 'Ada Lovelace <ada@example.com>' },
    })
  ).stdout;
const strip = (repo: string, revs: string) =>
  hg(repo, '--config', 'extensions.strip=', 'strip', '-q', '--no-backup', '-r', revs);

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

/** A new hosted repository importing `url` to `complete`. */
async function imported(name: string, url: string): Promise<string> {
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${token}` },
    body: JSON.stringify({ name }),
  });
  expect(created.status).toBe(201);
  const started = await api('PUT', `/repos/octocat/${name}/import`, { vcs_url: url, vcs: 'mercurial' });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  await until(name, 'complete');
  return `${stack.webUrl}/octocat/${name}.git`;
}

async function synced(name: string): Promise<void> {
  const started = await api('POST', `/repos/octocat/${name}/import/sync`);
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  await until(name, 'complete');
}

/** The hosted refs, without the `backups/…` refs a publish may keep of rewritten or deleted ones. */
const hostedRefs = async (url: string) =>
  (await remoteRefs(git, url)).filter((line) => !line.split(' ')[1]?.includes('backups/'));

const revisionMap = async (name: string) =>
  (await api('GET', `/repos/octocat/${name}/import/revisions?per_page=100`)).body as {
    origin_revision: string;
    commit: string;
  }[];

/** The `common` nodes of each `getbundle` request (hg's arguments, in `X-HgArg-N` headers). */
function bundleCommons(headers: readonly IncomingHttpHeaders[], requests: readonly string[]) {
  return requests.flatMap((line, index) => {
    if (!line.includes('cmd=getbundle')) return [];
    const seen = headers[index] ?? {};
    const args = Object.keys(seen)
      .filter((name) => /^x-hgarg-\d+$/.test(name))
      .sort((a, b) => Number(a.slice(8)) - Number(b.slice(8)))
      .map((name) => String(seen[name]))
      .join('');
    return [(new URLSearchParams(args).get('common') ?? '').split(' ').filter(Boolean)];
  });
}

beforeAll(async () => {
  stack = await startTestStack();
  git = await gitClient();
  root = await mkdtemp(join(tmpdir(), 'hg-sync-origins-'));
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await Promise.all(servers.map((server) => server.close()));
});

describe('syncing a followed Mercurial origin', () => {
  it('pulls and converts only the changesets not yet seen, to the refs of a fresh import', async () => {
    // hgweb+obs.hg: 69 changesets, 63 heads of default. The origin first holds revisions 0–39.
    const origin = join(root, 'obs');
    const bundle = join(FIXTURES, 'hgweb+obs.hg');
    await hg(root, 'init', origin);
    await hg(origin, 'unbundle', '-q', bundle);
    await strip(origin, '40:');
    await hg(origin, 'bookmark', '-r', '5', 'early');
    await hg(origin, 'bookmark', '-r', '10', 'gone');
    const server = await serveHg({ repo: origin });
    const front = await hgFront(server, {});
    servers.push(server, front);
    const hosted = await imported('obs', `${front.url}/`);
    expect((await api('PUT', '/repos/octocat/obs/import/sync', { interval_minutes: null })).status).toBe(200);
    const before = await hostedRefs(hosted);
    expect(before.some((line) => line.endsWith(' refs/heads/gone'))).toBe(true);

    // The origin gains the rest of the bundle, a closed named branch by another author, a tag, and
    // bookmark changes (one deleted, one moved).
    await hg(origin, 'unbundle', '-q', bundle);
    await hg(origin, 'bookmark', '-d', 'gone');
    await hg(origin, 'bookmark', '-f', '-r', '50', 'early');
    await hg(origin, 'update', '-q', '-r', '3');
    await hg(origin, 'branch', '-q', 'feature');
    await writeFile(join(origin, 'feature.txt'), 'on a named branch\n');
    await hg(origin, 'add', '-q', 'feature.txt');
    await hg(origin, 'commit', '-q', '-m', 'feature', '-u', 'Carl Gauß <carl@example.org>');
    await hg(origin, 'commit', '-q', '--close-branch', '-m', 'closed', '-u', 'bob');
    await hg(origin, 'update', '-q', '-C', '-r', '60');
    await hg(origin, 'tag', '-q', '-f', '-r', '60', 'v1.0');
    const requestsBefore = front.requests.length;
    await synced('obs');

    const fresh = await imported('obs-fresh', `${server.url}/`);
    const after = await hostedRefs(hosted);
    expect(after).toEqual(await hostedRefs(fresh));
    expect(after.some((line) => line.endsWith(' refs/heads/gone'))).toBe(false);
    expect(after.some((line) => line.endsWith(' refs/heads/branches/feature'))).toBe(true);
    expect(after.some((line) => line.endsWith(' refs/tags/v1.0'))).toBe(true);
    // Every changeset published before kept its id: the refs that did not move are where they were.
    const moved = new Set(['refs/heads/early', 'refs/heads/gone', 'refs/heads/main']);
    const kept = (lines: string[]) => lines.filter((line) => !moved.has(line.split(' ')[1] ?? ''));
    expect(kept(after).filter((line) => before.includes(line)).length).toBeGreaterThan(30);
    // The revision map: every changeset in the origin's order, each to the fresh import's commit.
    const nodes = (await hg(origin, 'log', '-r', 'all()', '-T', '{node}\n')).trim().split('\n');
    expect(nodes).toHaveLength(69 + 3); // feature, its close, the tag
    const map = await revisionMap('obs');
    expect(map.map((entry) => entry.origin_revision)).toEqual(nodes);
    expect(map).toEqual(await revisionMap('obs-fresh'));
    // Incremental: the sync's pull said it had the first part (a fresh pull has only the null node).
    const commons = bundleCommons(front.headers.slice(requestsBefore), front.requests.slice(requestsBefore));
    expect(commons).toHaveLength(1);
    expect(commons[0]?.filter((node) => node !== NULL_NODE).length).toBeGreaterThan(0);
    // Before pulling, the origin was asked whether it still knows raw.hg's heads (one request).
    const asked = front.requests.slice(requestsBefore).filter((line) => line.includes('cmds=known'));
    expect(asked).toHaveLength(1);
  }, 120_000);

  it('imports the whole origin again after a strip and new changesets there', async () => {
    // rebase.hg: 8 changesets, three heads of default, one merge.
    const origin = join(root, 'rebase');
    await hg(root, 'init', origin);
    await hg(origin, 'unbundle', '-q', join(FIXTURES, 'rebase.hg'));
    await hg(origin, 'bookmark', '-r', 'tip', 'topic');
    const server = await serveHg({ repo: origin });
    const front = await hgFront(server, {});
    servers.push(server, front);
    const hosted = await imported('rebase', `${front.url}/`);
    expect((await api('PUT', '/repos/octocat/rebase/import/sync', { interval_minutes: null })).status).toBe(
      200,
    );
    const before = await hostedRefs(hosted);

    // The tip is stripped (its bookmark moves to the parent) and a new changeset takes its place.
    const parent = (await hg(origin, 'log', '-r', 'p1(tip)', '-T', '{rev}')).trim();
    await strip(origin, 'tip');
    await hg(origin, 'update', '-q', '-C', '-r', parent);
    await writeFile(join(origin, 'after-strip.txt'), 'written after the strip\n');
    await hg(origin, 'add', '-q', 'after-strip.txt');
    await hg(origin, 'commit', '-q', '-m', 'after the strip');
    await hg(origin, 'bookmark', '-f', 'topic');
    const requestsBefore = front.requests.length;
    await synced('rebase');

    const fresh = await imported('rebase-fresh', `${server.url}/`);
    const after = await hostedRefs(hosted);
    expect(after).not.toEqual(before);
    expect(after).toEqual(await hostedRefs(fresh));
    const nodes = (await hg(origin, 'log', '-r', 'all()', '-T', '{node}\n')).trim().split('\n');
    const map = await revisionMap('rebase');
    expect(map.map((entry) => entry.origin_revision)).toEqual(nodes);
    expect(map).toEqual(await revisionMap('rebase-fresh'));
    // The sync noticed the lost changeset and pulled everything again (from the null node only).
    const commons = bundleCommons(front.headers.slice(requestsBefore), front.requests.slice(requestsBefore));
    expect(commons).toEqual([[NULL_NODE]]);

    // The history imported afresh is followed on from there: the next sync pulls only what is new.
    await writeFile(join(origin, 'after-strip.txt'), 'and one more\n');
    await hg(origin, 'commit', '-q', '-m', 'one more');
    const requestsThen = front.requests.length;
    await synced('rebase');
    const next = bundleCommons(front.headers.slice(requestsThen), front.requests.slice(requestsThen));
    expect(next).toHaveLength(1);
    expect(next[0]).toContain((await hg(origin, 'log', '-r', 'p1(tip)', '-T', '{node}')).trim());
    expect((await revisionMap('rebase')).map((entry) => entry.origin_revision)).toEqual(
      (await hg(origin, 'log', '-r', 'all()', '-T', '{node}\n')).trim().split('\n'),
    );
  }, 120_000);
});
