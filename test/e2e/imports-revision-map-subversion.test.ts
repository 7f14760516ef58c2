import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SvnServer, serveSvn } from '#local/svn-origins';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient } from '#test/git-client';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';
import { expectMapFollowsLog } from '#test/svn-revision-log';

/**
 * The revision map of Subversion imports over svn:// (issue 35, item 1), checked against
 * `svn log -v` of each origin (`#test/svn-revision-log` says how), on third-party dumps (git's
 * t9151, t9135 and t9136, Mercurial's branches and tags dumps, Subversion's descend-into-replace)
 * and one built here with svn itself (a branch made from an older trunk, a revision changing
 * trunk and a branch, a branch replaced twice, a property set on trunk alone, a tag made and
 * deleted).
 */

const exec = promisify(execFile);
const FIXTURES = join(import.meta.dirname, '../fixtures/svn');
const DUMPS = [
  'git-t9151-svn-mergeinfo',
  'git-t9135-svn',
  'git-t9136-svn',
  'hg-branches',
  'hg-tags',
  'svn-descend-into-replace',
] as const;

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let work: string;
let parent: string;
let svnserve: SvnServer;

const env = () => ({ PATH: process.env.PATH, HOME: work, LC_ALL: 'C' });
const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);
const originUrl = (name: string) => `file://${join(parent, name)}`;

/**
 * Built with svn's own commands: trunk, a branch made from an older trunk, one revision changing
 * trunk and the branch, the branch replaced (once as it was copied, once with a new file), a
 * property set on trunk alone, a tag made and deleted, then a branch `tmp` made (r11), changed
 * alone (r12) and deleted (r13).
 */
async function makeBuiltRepository(name: string): Promise<void> {
  const path = join(parent, name);
  const url = originUrl(name);
  const svn = (...args: string[]) =>
    exec('svn', ['--non-interactive', '--username', 'ada', ...args], { env: env(), cwd: work });
  const mucc = (message: string, ...args: string[]) =>
    exec('svnmucc', ['--non-interactive', '--username', 'bob', '-m', message, '-U', url, ...args], {
      env: env(),
      cwd: work,
    });
  await exec('svnadmin', ['create', path], { env: env() });
  await svn('mkdir', '-m', 'Layout', `${url}/trunk`, `${url}/branches`, `${url}/tags`);
  const files = await mkdtemp(join(work, 'built-'));
  await writeFile(join(files, 'a.txt'), 'a\n');
  await writeFile(join(files, 'b.txt'), 'b\n');
  await svn('import', '-m', 'Two files', files, `${url}/trunk`);
  const wc = join(await mkdtemp(join(work, 'wc-')), 'root');
  await svn('checkout', '-q', url, wc);
  await writeFile(join(wc, 'trunk/a.txt'), 'a\na2\n');
  await svn('commit', '-m', 'Trunk moves on', wc);
  await svn('copy', '-m', 'Branch old from trunk at r2', `${url}/trunk@2`, `${url}/branches/old`);
  await svn('update', '-q', wc);
  await writeFile(join(wc, 'trunk/b.txt'), 'b\non trunk\n');
  await writeFile(join(wc, 'branches/old/b.txt'), 'b\non the branch\n');
  await svn('commit', '-m', 'One change on trunk and one on the branch\n\nin one revision', wc);
  await mucc('Replace the branch with trunk', 'rm', 'branches/old', 'cp', 'HEAD', 'trunk', 'branches/old');
  const extra = join(files, 'c.txt');
  await writeFile(extra, 'c\n');
  await mucc(
    'Replace the branch again, with a new file',
    'rm',
    'branches/old',
    'cp',
    '3',
    'trunk',
    'branches/old',
    'put',
    extra,
    'branches/old/c.txt',
  );
  await mucc('A property Git does not keep', 'propset', 'team:owner', 'ada', 'trunk');
  await mucc('Tag v1', 'cp', 'HEAD', 'trunk', 'tags/v1');
  await mucc('Tag v1 deleted', 'rm', 'tags/v1');
  await mucc('Branch tmp', 'cp', 'HEAD', 'trunk', 'branches/tmp');
  await mucc('Work on tmp alone', 'put', extra, 'branches/tmp/c.txt');
  await mucc('Branch tmp deleted', 'rm', 'branches/tmp');
}

async function importOf(name: string, choices: Record<string, unknown> = {}): Promise<string> {
  const repo = `map-${name}${Object.keys(choices).length > 0 ? '-chosen' : ''}`;
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${token}` },
    body: JSON.stringify({ name: repo }),
  });
  expect(created.status).toBe(201);
  const put = await api('PUT', `/repos/octocat/${repo}/import`, {
    vcs_url: svnserve.url(name),
    vcs: 'subversion',
    ...choices,
  });
  expect(put.status, JSON.stringify(put.body)).toBe(201);
  const deadline = Date.now() + 90_000;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    last = (await api('GET', `/repos/octocat/${repo}/import`)).body;
    if (last.status === 'complete') return repo;
    if (last.status === 'error') break;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`import of ${name} did not complete: ${JSON.stringify(last)}`);
}

async function revisionMap(repo: string): Promise<Map<number, string>> {
  const page = await api('GET', `/repos/octocat/${repo}/import/revisions?per_page=100`);
  expect(page.status).toBe(200);
  expect(page.headers.get('link') ?? '').not.toContain('rel="next"');
  return new Map(
    (page.body as { origin_revision: string; commit: string }[]).map((e) => [
      Number(e.origin_revision),
      e.commit,
    ]),
  );
}

beforeAll(async () => {
  stack = await startTestStack();
  git = await gitClient();
  work = await mkdtemp(join(tmpdir(), 'svn-map-e2e-'));
  parent = join(work, 'repos');
  await mkdir(parent);
  for (const name of DUMPS) {
    await exec('svnadmin', ['create', join(parent, name)], { env: env() });
    await exec('svnadmin', ['load', '-q', '-F', join(FIXTURES, `${name}.dump`), join(parent, name)], {
      env: env(),
    });
  }
  await makeBuiltRepository('built');
  svnserve = await serveSvn(parent);
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await svnserve?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

async function mirrorOf(repo: string): Promise<string> {
  const clone = await mkdtemp(join(work, 'clone-'));
  const cloned = await git(['clone', '-q', '--mirror', `${stack.webUrl}/octocat/${repo}.git`, clone]);
  expect(cloned.code, cloned.stderr).toBe(0);
  return clone;
}

describe.concurrent('GET /repos/:owner/:repo/import/revisions (Subversion origin, svn://)', () => {
  it.each([...DUMPS, 'built'])(
    'maps every revision of %s that changes a branch or tag to the commit it made, or that holds its state',
    async (name) => {
      const repo = await importOf(name);
      const map = await revisionMap(repo);
      await expectMapFollowsLog({ map, clone: await mirrorOf(repo), originUrl: originUrl(name), work, name });
    },
    150_000,
  );

  it('leaves out the revisions whose commits went with the deleted refs the owner chose not to keep', async () => {
    // built: r12 wrote a commit only on branch tmp, which r13 deleted.
    const repo = await importOf('built', { keep_deleted_refs: false });
    const map = await revisionMap(repo);
    expect([...map.keys()]).not.toContain(12);
    expect([...map.keys()]).not.toContain(13);
    await expectMapFollowsLog({
      map,
      clone: await mirrorOf(repo),
      originUrl: originUrl('built'),
      work,
      name: 'built without deleted refs',
      only: (expected) => expected.revision < 12,
    });
  }, 150_000);
});
