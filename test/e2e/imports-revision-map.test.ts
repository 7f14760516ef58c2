import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { createUser, personalToken } from '#test/fixtures';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';
import { WebClient } from '#test/web-client';

/**
 * The revision map (issue 27, item 4) of a Git import through the API and the real workflow:
 * paged with `Link` in origin order, one entry by origin revision, 404 otherwise, and rewritten
 * with the history when an author mapping changes after `complete`. Checked against the origin
 * and the hosted repository with git itself.
 */

const exec = promisify(execFile);
type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let token: string;
let owner: Awaited<ReturnType<typeof createUser>>;
let origin: OriginServer;
let originDir: string;
let work: string;
const REPO = 'mapped';
const AUTHORS = [
  { name: 'Ada Lovelace', email: 'ada@example.org' },
  { name: 'Grace Hopper', email: 'grace@example.org' },
];

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);
const gitIn = async (dir: string, ...args: string[]) =>
  (
    await exec('git', ['-C', dir, ...args], {
      env: { PATH: process.env.PATH, HOME: work, GIT_CONFIG_NOSYSTEM: '1' },
      maxBuffer: 64 * 1024 * 1024,
    })
  ).stdout;

async function until(done: (body: Record<string, unknown>) => boolean, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    last = (await api('GET', `/repos/octocat/${REPO}/import`)).body;
    if (done(last)) return last;
    if (last.status === 'error') break;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`the import did not get there: ${JSON.stringify(last)}`);
}

/** The Link header as rel → URL. */
const links = (header: string | null): Record<string, string> =>
  Object.fromEntries(
    (header ?? '')
      .split(', ')
      .filter(Boolean)
      .map((part) => {
        const [, url, rel] = /^<([^>]+)>; rel="(\w+)"$/.exec(part) ?? [];
        return [rel ?? '', url ?? ''];
      }),
  );

interface Entry {
  origin_revision: string;
  commit: string;
}

/** Every entry, following `next` links from the first page of `perPage`. */
async function wholeMap(perPage: number): Promise<{ entries: Entry[]; pages: number }> {
  const entries: Entry[] = [];
  let url: string | undefined = `/repos/octocat/${REPO}/import/revisions?per_page=${perPage}`;
  let pages = 0;
  while (url) {
    const page = await api('GET', url);
    expect(page.status).toBe(200);
    entries.push(...(page.body as Entry[]));
    pages++;
    const next = links(page.headers.get('link')).next;
    url = next ? next.slice(stack.baseUrl.length) : undefined;
  }
  return { entries, pages };
}

/** A fresh bare copy of the hosted repository. */
async function hostedCopy(): Promise<string> {
  const dir = await mkdtemp(join(work, 'hosted-'));
  await exec('git', ['clone', '--quiet', '--mirror', `${stack.webUrl}/octocat/${REPO}.git`, dir], {
    env: { PATH: process.env.PATH, HOME: work, GIT_CONFIG_NOSYSTEM: '1' },
  });
  return dir;
}

beforeAll(async () => {
  stack = await startTestStack();
  work = await mkdtemp(join(tmpdir(), 'revision-map-'));
  const root = await mkdtemp(join(tmpdir(), 'revision-map-origin-'));
  originDir = join(root, 'history.git');
  await makeFixtureRepository(originDir, { commits: 60, branches: 3, annotatedTags: 4, authors: AUTHORS });
  origin = await serveGitHttp(root);
  owner = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, owner.auth, ['repo'])).token;
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${token}` },
    body: JSON.stringify({ name: REPO }),
  });
  expect(created.status).toBe(201);
  const started = await api('PUT', `/repos/octocat/${REPO}/import`, { vcs_url: `${origin.url}/history.git` });
  expect(started.status).toBe(201);
  await until((body) => body.status === 'complete');
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await origin?.close();
});

describe('GET /repos/:owner/:repo/import/revisions (Git origin)', () => {
  it('lists every origin commit once, parents first, each published under its own id', async () => {
    const originCommits = (await gitIn(originDir, 'rev-list', '--branches', '--tags'))
      .split('\n')
      .filter(Boolean);
    const { entries } = await wholeMap(100);

    expect(entries.map((entry) => entry.origin_revision).sort()).toEqual([...originCommits].sort());
    for (const entry of entries) expect(entry.commit).toBe(entry.origin_revision);
    // Origin order: no commit before one of its parents.
    const position = new Map(entries.map((entry, index) => [entry.origin_revision, index]));
    const parents = (await gitIn(originDir, 'rev-list', '--parents', '--branches', '--tags'))
      .split('\n')
      .filter(Boolean);
    for (const line of parents) {
      const [commit = '', ...ofIt] = line.split(' ');
      for (const parent of ofIt) expect(position.get(parent)).toBeLessThan(position.get(commit) ?? -1);
    }
  });

  it('pages with GitHub Link headers: next and last, then first and prev; pages join up', async () => {
    const whole = await wholeMap(100);
    const first = await api('GET', `/repos/octocat/${REPO}/import/revisions?per_page=7`);
    const base = `${stack.baseUrl}/repos/octocat/${REPO}/import/revisions`;
    const last = Math.ceil(whole.entries.length / 7);

    expect(first.body).toHaveLength(7);
    expect(links(first.headers.get('link'))).toEqual({
      next: `${base}?per_page=7&page=2`,
      last: `${base}?per_page=7&page=${last}`,
    });
    const second = await api('GET', `/repos/octocat/${REPO}/import/revisions?per_page=7&page=2`);
    expect(links(second.headers.get('link'))).toMatchObject({
      first: `${base}?per_page=7&page=1`,
      prev: `${base}?per_page=7&page=1`,
    });
    const paged = await wholeMap(7);
    expect(paged.pages).toBe(last);
    expect(paged.entries).toEqual(whole.entries);
    const beyond = await api('GET', `/repos/octocat/${REPO}/import/revisions?per_page=7&page=${last + 1}`);
    expect(beyond.status).toBe(200);
    expect(beyond.body).toEqual([]);
  });

  it('answers one entry by origin revision, and 404 in GitHub’s shape for any other', async () => {
    const tip = (await gitIn(originDir, 'rev-parse', 'HEAD')).trim();
    const one = await api('GET', `/repos/octocat/${REPO}/import/revisions/${tip}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ origin_revision: tip, commit: tip });

    for (const unknown of ['0'.repeat(40), '12345', 'not-a-revision', 'r12', 'F042BF9C'.padEnd(40, '0')]) {
      const missing = await api('GET', `/repos/octocat/${REPO}/import/revisions/${unknown}`);
      expect(missing.status, unknown).toBe(404);
      expect(missing.body).toMatchObject({ message: 'Not Found' });
    }
  });

  it('follows a rewrite: after an author is mapped, each origin commit maps to the commit with its tree and message', async () => {
    const authors = (await api('GET', `/repos/octocat/${REPO}/import/authors`)).body as {
      id: number;
      name: string;
    }[];
    const ada = authors.find((author) => author.name === 'Ada Lovelace');
    const mapped = await api('PATCH', `/repos/octocat/${REPO}/import/authors/${ada?.id}`, {
      name: 'Augusta Ada King',
      email: 'ada@king.example',
    });
    expect(mapped.status).toBe(200);
    await until((body) => body.status === 'complete' && body.authors_count === 2, 90_000);
    await until((body) => body.status === 'complete');

    const { entries } = await wholeMap(100);
    const hosted = await hostedCopy();
    const show = async (dir: string, commit: string) =>
      (await gitIn(dir, 'show', '-s', '--format=%T%n%an%n%B', commit)).split('\n');
    let rewritten = 0;
    for (const entry of entries) {
      const [originTree, originAuthor, ...originMessage] = await show(originDir, entry.origin_revision);
      const [tree, author, ...message] = await show(hosted, entry.commit);
      expect(tree).toBe(originTree);
      expect(message).toEqual(originMessage);
      expect(author).toBe(originAuthor === 'Ada Lovelace' ? 'Augusta Ada King' : originAuthor);
      if (entry.commit !== entry.origin_revision) rewritten++;
    }
    expect(rewritten).toBeGreaterThan(0);
    const tip = (await gitIn(originDir, 'rev-parse', 'HEAD')).trim();
    const one = await api('GET', `/repos/octocat/${REPO}/import/revisions/${tip}`);
    expect(one.body).toEqual({
      origin_revision: tip,
      commit: (await gitIn(hosted, 'rev-parse', 'HEAD')).trim(),
    });
  });

  it('offers the map on the progress page as CSV downloads of origin_revision,commit', async () => {
    const web = new WebClient(stack.webUrl);
    await web.get('/login');
    expect((await web.post('/login', { login: owner.login, password: owner.password })).status).toBe(303);
    const page = await (await web.get(`/octocat/${REPO}/import`)).text();
    const href = /href="([^"]*revisions\.csv\?part=1)"/.exec(page)?.[1];
    expect(href).toBeDefined();
    const csv = await web.get(new URL(href ?? '', stack.webUrl).pathname + '?part=1');
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.headers.get('content-disposition')).toMatch(
      /^attachment; filename="mapped-revisions-1\.csv"$/,
    );
    const { entries } = await wholeMap(100);
    expect(await csv.text()).toBe(
      `origin_revision,commit\r\n${entries.map((e) => `${e.origin_revision},${e.commit}\r\n`).join('')}`,
    );
  });
});
