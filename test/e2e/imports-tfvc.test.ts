import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALPHA_FINAL_TREE, TFVC_LONG_COMMENT, tfvcHistory } from '#local/tfvc-alpha';
import { serveTfvc, type TfvcServer } from '#local/tfvc-origin';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient } from '#test/git-client';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';

/**
 * TFVC imports through the API and the real workflow against the TFVC stand-in (the REST API as
 * Microsoft's specification describes it, on 127.0.0.1), checked with `git clone` of the hosted repository.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let collection: TfvcServer; // Alpha and Beta
let locked: TfvcServer; // Alpha only, behind a PAT
const PAT = 'tfvc-pat-e2e-secret';

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);

let repoCount = 0;
async function newRepo(): Promise<string> {
  const name = `from-tfvc-${++repoCount}`;
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${token}` },
    body: JSON.stringify({ name }),
  });
  expect(created.status).toBe(201);
  return name;
}

async function until(repo: string, wanted: string, timeoutMs = 30_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    last = (await api('GET', `/repos/octocat/${repo}/import`)).body;
    if (last.status === wanted) return last;
    if (last.status === 'error') break;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`import of ${repo} did not reach ${wanted}: ${JSON.stringify(last)}`);
}

async function clone(repo: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tfvc-import-clone-'));
  const cloned = await git(['clone', '--quiet', `${stack.webUrl}/octocat/${repo}.git`, dir]);
  expect(cloned.code, cloned.stderr).toBe(0);
  return dir;
}

beforeAll(async () => {
  stack = await startTestStack();
  git = await gitClient();
  const [alpha] = tfvcHistory();
  if (!alpha) throw new Error('fixture');
  [collection, locked] = await Promise.all([
    serveTfvc({ projects: tfvcHistory(), maxPage: 3 }),
    serveTfvc({ projects: [alpha], pat: PAT, authStyle: 203 }),
  ]);
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await Promise.all([collection?.close(), locked?.close()]);
});

describe('a TFVC import through the API and the workflow', () => {
  it('imports the named project, and a mapped author changes the published history', async () => {
    const repo = await newRepo();
    const started = await api('PUT', `/repos/octocat/${repo}/import`, {
      vcs_url: collection.collectionUrl,
      vcs: 'tfvc',
      tfvc_project: 'Alpha',
    });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ vcs: 'tfvc', tfvc_project: 'Alpha' });
    const done = await until(repo, 'complete');
    expect(done).toMatchObject({ vcs: 'tfvc', tfvc_project: 'Alpha', authors_count: 2 });
    // The report: what was looked for and not carried over (tools/ lost its only file at changeset 10).
    const report = (await api('GET', `/repos/octocat/${repo}/import/report`)).body;
    expect(report).toMatchObject({
      status: 'complete',
      empty_directories_count: 1,
      empty_directories: [{ path: 'tools', ref: 'refs/heads/main', kept: false }],
      tfvc_labels_count: 0,
      tfvc_shelvesets_count: 0,
      tfvc_branches_count: 0,
    });
    expect(report).not.toHaveProperty('authorless_commits_count');

    const dir = await clone(repo);
    const files = (await git(['-c', 'core.quotePath=false', 'ls-files'], { cwd: dir })).stdout
      .trim()
      .split('\n');
    expect(files).toEqual(Object.keys(ALPHA_FINAL_TREE).sort());
    for (const [path, content] of Object.entries(ALPHA_FINAL_TREE))
      expect(await readFile(join(dir, path))).toEqual(Buffer.from(content));
    expect((await git(['rev-list', '--count', 'HEAD'], { cwd: dir })).stdout.trim()).toBe('8');
    // A comment over 2,000 characters arrives whole.
    expect((await git(['log', '-1', '--format=%B', 'HEAD~3'], { cwd: dir })).stdout).toBe(
      `${TFVC_LONG_COMMENT.replace(/\r\n/g, '\n')}\n\n`,
    );
    expect((await git(['symbolic-ref', 'HEAD'], { cwd: dir })).stdout.trim()).toBe('refs/heads/main');

    const authors = (await api('GET', `/repos/octocat/${repo}/import/authors`)).body as {
      id: number;
      remote_name: string;
      name: string;
      email: string;
    }[];
    expect(authors.map((author) => `${author.remote_name}: ${author.name} <${author.email}>`).sort()).toEqual(
      ['CONTOSO\\bob: Bob Builder <bob@tfvc.invalid>', 'ada@example.com: Ada Lovelace <ada@example.com>'],
    );
    const bob = authors.find((author) => author.name === 'Bob Builder');
    const mapped = await api('PATCH', `/repos/octocat/${repo}/import/authors/${bob?.id}`, {
      name: 'Robert Builder',
      email: 'robert@builder.example',
    });
    expect(mapped.status).toBe(200);
    // Mapping an author of a complete import rewrites and republishes it (status `mapping` at once).
    await until(repo, 'complete');
    const again = await clone(repo);
    const names = (await git(['log', '--format=%an <%ae>'], { cwd: again })).stdout;
    expect(names).toContain('Robert Builder <robert@builder.example>');
    expect(names).not.toContain('bob@tfvc.invalid');

    // The revision map, rewritten with the history: each of Alpha's changesets, in order, names the
    // commit made of it (one commit per changeset on a straight line).
    const map = await api('GET', `/repos/octocat/${repo}/import/revisions?per_page=100`);
    expect(map.status).toBe(200);
    const [alpha] = tfvcHistory();
    const commits = (await git(['rev-list', '--reverse', 'HEAD'], { cwd: again })).stdout.trim().split('\n');
    expect(map.body).toEqual(
      (alpha?.changesets ?? []).map((changeset, index) => ({
        origin_revision: String(changeset.id),
        commit: commits[index],
      })),
    );
    const one = await api('GET', `/repos/octocat/${repo}/import/revisions/7`);
    expect(one.body).toEqual({ origin_revision: '7', commit: commits[4] });
    expect((await api('GET', `/repos/octocat/${repo}/import/revisions/2`)).status).toBe(404);
  }, 40_000);

  it('keeps the empty folder when the owner chose keep_empty_directories on PUT: the choice reaches the job', async () => {
    const repo = await newRepo();
    const started = await api('PUT', `/repos/octocat/${repo}/import`, {
      vcs_url: collection.collectionUrl,
      vcs: 'tfvc',
      tfvc_project: 'Alpha',
      keep_empty_directories: true,
    });
    expect(started.status).toBe(201);
    expect(started.body).not.toHaveProperty('keep_empty_directories');
    await until(repo, 'complete');
    const report = (await api('GET', `/repos/octocat/${repo}/import/report`)).body;
    expect(report).toMatchObject({
      choices: { keep_empty_directories: true, keep_deleted_refs: true },
      empty_directories_count: 1,
      empty_directories: [{ path: 'tools', ref: 'refs/heads/main', kept: true }],
    });
    const dir = await clone(repo);
    const files = (await git(['ls-files'], { cwd: dir })).stdout.trim().split('\n');
    expect(files).toContain('tools/.gitignore');
    expect(await readFile(join(dir, 'tools', '.gitignore'))).toEqual(Buffer.alloc(0));
  });

  it('detects a collection of two projects, and imports the one chosen', async () => {
    const repo = await newRepo();
    expect(
      (await api('PUT', `/repos/octocat/${repo}/import`, { vcs_url: collection.collectionUrl })).status,
    ).toBe(201);
    const waiting = await until(repo, 'detection_found_multiple');
    expect(waiting.project_choices).toEqual([
      { vcs: 'tfvc', tfvc_project: 'Alpha', human_name: 'Alpha' },
      { vcs: 'tfvc', tfvc_project: 'Beta', human_name: 'Beta' },
    ]);
    const chosen = await api('PATCH', `/repos/octocat/${repo}/import`, {
      vcs: 'tfvc',
      tfvc_project: 'Beta',
      human_name: 'Beta',
    });
    expect(chosen.status).toBe(200);
    expect(await until(repo, 'complete')).toMatchObject({ vcs: 'tfvc', tfvc_project: 'Beta' });
    const dir = await clone(repo);
    expect(await readFile(join(dir, 'beta.txt'), 'utf8')).toBe('beta\nmore\n');
    expect((await git(['log', '--format=%s'], { cwd: dir })).stdout).toBe('Beta grows\nBeta starts\n');
    // Beta's changesets keep the collection's numbers.
    const map = (await api('GET', `/repos/octocat/${repo}/import/revisions`)).body as {
      origin_revision: string;
    }[];
    expect(map.map((entry) => entry.origin_revision)).toEqual(['2', '5']);
  }, 40_000);

  it('asks for credentials at a protected collection, then imports with the PAT', async () => {
    const repo = await newRepo();
    await api('PUT', `/repos/octocat/${repo}/import`, { vcs_url: locked.collectionUrl });
    await until(repo, 'detection_needs_auth');
    const resumed = await api('PATCH', `/repos/octocat/${repo}/import`, {
      vcs_username: 'anyone',
      vcs_password: PAT,
    });
    expect(resumed.status).toBe(200);
    const done = await until(repo, 'complete');
    expect(done).toMatchObject({ vcs: 'tfvc' });
    expect(JSON.stringify(done)).not.toContain(PAT);
    const dir = await clone(repo);
    expect(await readFile(join(dir, 'src/app.ts'), 'utf8')).toBe('console.log(2);\n');
  }, 40_000);
});
