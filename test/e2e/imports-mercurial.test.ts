import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OriginServer } from '#local/git-origins';
import { makeHgFixture, serveHg } from '#local/hg-origins';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient } from '#test/git-client';
import { startTestStack } from '#test/stack';

/** A Mercurial import through the API and the real workflow, checked with `git clone` of the hosted repository. */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let origin: OriginServer;
const PREVIEW = 'application/vnd.github.barred-rock-preview';

async function api(method: string, path: string, body?: unknown) {
  const response = await fetch(`${stack.baseUrl}${path}`, {
    method,
    headers: { Authorization: `token ${token}`, Accept: PREVIEW },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

beforeAll(async () => {
  stack = await startTestStack();
  git = await gitClient();
  const root = await mkdtemp(join(tmpdir(), 'hg-import-origin-'));
  await makeHgFixture(join(root, 'repo'));
  origin = await serveHg({ repo: join(root, 'repo') });
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await origin?.close();
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
  }, 60_000);
});
