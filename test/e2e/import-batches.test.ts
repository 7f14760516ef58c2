import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SvnServer, serveSvn } from '#local/svn-origins';
import { makeDumpProjectsRoot } from '#local/svn-projects-root';
import { ENV } from '#shared/config';
import { createUser, personalToken } from '#test/fixtures';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';
import { WebClient } from '#test/web-client';

/**
 * Batches of imports (issue 37) through HTTP against the local stack and its real workflow: a
 * Subversion root of six projects loaded from third-party dumps (`#local/svn-projects-root`),
 * served by svnserve on 127.0.0.1. The service's bound on a batch's imports at once is 2 here.
 */

process.env[ENV.importBatchConcurrency] = '2';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let token: string;
let work: string;
let svn: SvnServer;

const PROJECTS = ['deletion', 'retag', 'mergeinfo', 'replace', 'relabel', 'forks'] as const;
const RUNNING = new Set(['detecting', 'importing', 'mapping', 'pushing']);

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);
const rootUrl = () => svn.url('root');

interface EntryJson {
  index: number;
  repository: string;
  state: string;
  status: string | null;
  following: string | null;
  [key: string]: unknown;
}

/**
 * Polls the batch until `done`; every poll checks that no more than `bound` of its imports run at
 * once. Returns the batch and the most imports seen running together.
 */
async function watch(
  id: number,
  done: (entries: EntryJson[], batch: { running: number; queued: number }) => boolean,
  bound: number,
  timeoutMs = 90_000,
) {
  const deadline = Date.now() + timeoutMs;
  let most = 0;
  let last: { imports: EntryJson[]; running: number; queued: number } = {
    imports: [],
    running: 0,
    queued: 0,
  };
  while (Date.now() < deadline) {
    const answer = await api('GET', `/user/import-batches/${id}`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    last = answer.body;
    const running = last.imports.filter((entry) => RUNNING.has(entry.status ?? '')).length;
    most = Math.max(most, running);
    expect(running).toBeLessThanOrEqual(bound);
    if (last.imports.some((entry) => entry.status === 'error'))
      throw new Error(`an import of the batch failed: ${JSON.stringify(last.imports)}`);
    if (done(last.imports, last)) return { batch: last, most };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`batch ${id} did not get there: ${JSON.stringify(last.imports)}`);
}
const allComplete = (entries: EntryJson[]) => entries.every((entry) => entry.status === 'complete');

/** A new repository whose import waits in `detection_found_multiple` at the root. */
async function waitingImport(name: string): Promise<{ human_name: string }[]> {
  const made = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${token}` },
    body: JSON.stringify({ name }),
  });
  expect(made.status).toBe(201);
  expect((await api('PUT', `/repos/octocat/${name}/import`, { vcs_url: rootUrl() })).status).toBe(201);
  const deadline = Date.now() + 30_000;
  let found: { status?: string; project_choices?: { human_name: string }[] } = {};
  while (Date.now() < deadline && found.status !== 'detection_found_multiple') {
    found = (await api('GET', `/repos/octocat/${name}/import`)).body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(found.status).toBe('detection_found_multiple');
  return found.project_choices ?? [];
}

async function repoNames(): Promise<string[]> {
  const response = await fetch(`${stack.baseUrl}/user/repos?per_page=100`, {
    headers: { Authorization: `token ${token}` },
  });
  if (response.status !== 200) return [];
  return ((await response.json()) as { name: string }[]).map((repo) => repo.name).sort();
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'import-batches-'));
  await makeDumpProjectsRoot(work, PROJECTS);
  svn = await serveSvn(work);
  stack = await startTestStack();
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await svn?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('POST /user/import-batches', () => {
  it('refuses every bad entry at once, by index, and creates nothing', async () => {
    const taken = await fetch(`${stack.baseUrl}/user/repos`, {
      method: 'POST',
      headers: { Authorization: `token ${token}` },
      body: JSON.stringify({ name: 'taken-name' }),
    });
    expect(taken.status).toBe(201);
    const before = await repoNames();
    const answer = await api('POST', '/user/import-batches', {
      vcs_url: rootUrl(),
      vcs: 'subversion',
      projects: [
        'deletion',
        { name: 'retag', repository: 'taken-name' },
        { name: 'mergeinfo', repository: 'bad name!' },
        { name: 'replace', repository: 'Deletion' },
        'a/b',
      ],
    });
    expect(answer.status).toBe(422);
    expect(answer.body.errors).toEqual([
      expect.objectContaining({
        resource: 'ImportBatch',
        field: 'imports[1].repository',
        code: 'already_exists',
      }),
      expect.objectContaining({ resource: 'ImportBatch', field: 'imports[2].repository', code: 'invalid' }),
      expect.objectContaining({
        resource: 'ImportBatch',
        field: 'imports[3].repository',
        code: 'already_exists',
      }),
      expect.objectContaining({ resource: 'ImportBatch', field: 'imports[4].project', code: 'invalid' }),
    ]);
    expect(await repoNames()).toEqual(before);
    expect((await api('GET', '/user/import-batches')).body).toEqual([]);
  });

  it('refuses a request with no source, two sources, or more entries than a batch holds', async () => {
    expect((await api('POST', '/user/import-batches', { vcs: 'subversion' })).status).toBe(422);
    const both = await api('POST', '/user/import-batches', {
      vcs_url: rootUrl(),
      vcs: 'subversion',
      projects: ['deletion'],
      imports: [{ vcs_url: rootUrl() }],
    });
    expect(both.status).toBe(422);
    const many = await api('POST', '/user/import-batches', {
      imports: Array.from({ length: 201 }, (_, n) => ({ vcs_url: `${rootUrl()}/p${n}`, vcs: 'subversion' })),
    });
    expect(many.status).toBe(422);
    expect(many.body.errors[0]).toMatchObject({ field: 'imports', code: 'invalid' });
  });
});

describe('a batch of the six projects of one root, two at a time', () => {
  let id: number;

  it('runs at most two imports at once, completes all six, and follows them as asked', async () => {
    const created = await api('POST', '/user/import-batches', {
      vcs_url: rootUrl(),
      vcs: 'subversion',
      projects: [...PROJECTS],
      follow: { interval_minutes: null },
      concurrency: 5,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    id = created.body.id;
    expect(created.headers.get('location')).toBe(`${stack.baseUrl}/user/import-batches/${id}`);
    // The service's bound (2) wins over the 5 asked for.
    expect(created.body).toMatchObject({ total: 6, concurrency: 2, running: 2, queued: 4 });
    expect(created.body.imports.map((entry: EntryJson) => entry.repository)).toEqual([...PROJECTS]);
    expect(created.body.imports.map((entry: EntryJson) => entry.state)).toEqual([
      'started',
      'started',
      'queued',
      'queued',
      'queued',
      'queued',
    ]);
    expect(created.body.imports[2]).toMatchObject({
      status: null,
      html_url: expect.stringMatching(/\/octocat\/mergeinfo\/import$/),
    });

    const { batch, most } = await watch(
      id,
      (entries, batch) =>
        allComplete(entries) && entries.every((e) => e.following === 'following') && batch.running === 0,
      2,
    );
    expect(most).toBeGreaterThan(0);
    expect(batch).toMatchObject({ running: 0, queued: 0 });
    // Each is an ordinary import of its own project (the chosen project, from the start).
    const single = await api('GET', '/repos/octocat/relabel/import');
    expect(single.body).toMatchObject({ status: 'complete', vcs: 'subversion', vcs_url: rootUrl() });
  }, 150_000);

  it('syncs all now, then cuts all over', async () => {
    const synced = await api('POST', `/user/import-batches/${id}/sync`);
    expect(synced.status).toBe(202);
    expect(synced.body.outcomes.map((o: { outcome: string }) => o.outcome)).toEqual(Array(6).fill('done'));
    await watch(id, allComplete, 6);
    const followed = await api('PUT', `/user/import-batches/${id}/sync`, { interval_minutes: 60 });
    expect(followed.status).toBe(200);
    expect(followed.body.imports.map((e: EntryJson) => e.interval_minutes)).toEqual(Array(6).fill(60));
    const cut = await api('DELETE', `/user/import-batches/${id}/sync`);
    expect(cut.status).toBe(200);
    expect(cut.body.outcomes.map((o: { outcome: string }) => o.outcome)).toEqual(Array(6).fill('done'));
    expect(cut.body.imports.map((e: EntryJson) => e.following)).toEqual(Array(6).fill('cut_over'));
    expect(cut.body.following).toBeNull();
    // A second sync-all finds nothing following: each entry is skipped, none fails.
    const again = await api('POST', `/user/import-batches/${id}/sync`);
    expect(again.body.outcomes.map((o: { outcome: string }) => o.outcome)).toEqual(Array(6).fill('skipped'));
  }, 120_000);
});

describe('a batch of a list of origins', () => {
  it('imports each origin into the repository named after it, and cancelling keeps what is complete', async () => {
    const created = await api('POST', '/user/import-batches', {
      imports: [
        { vcs_url: svn.url('root/deletion'), vcs: 'svn', repository: 'list-deletion' },
        { vcs_url: svn.url('root/retag'), repository: 'list-retag' },
        { vcs_url: svn.url('root/forks'), vcs: 'subversion', repository: 'list-forks' },
      ],
      concurrency: 1,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.imports.map((e: EntryJson) => e.repository)).toEqual([
      'list-deletion',
      'list-retag',
      'list-forks',
    ]);
    const id = created.body.id;
    // Wait for the first to complete, then cancel: it is kept; the others are cancelled.
    await watch(id, (entries) => entries[0]?.status === 'complete', 1);
    const cancelled = await api('DELETE', `/user/import-batches/${id}`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.outcomes[0]).toMatchObject({ index: 0, outcome: 'skipped' });
    expect(cancelled.body.outcomes.slice(1).map((o: { outcome: string }) => o.outcome)).toEqual([
      'done',
      'done',
    ]);
    expect(cancelled.body.imports[0]).toMatchObject({ status: 'complete' });
    expect(cancelled.body.imports.slice(1).map((e: EntryJson) => e.status)).toEqual([null, null]);
    expect(cancelled.body).toMatchObject({ queued: 0, running: 0 });
  }, 120_000);
});

describe('a batch from an import waiting for a project choice', () => {
  it('takes the first project into that import and the others into new repositories', async () => {
    const choices = await waitingImport('server');
    expect(choices.map((choice) => choice.human_name).sort()).toEqual([...PROJECTS].sort());

    // All of them: the names derived from the projects are taken by the batch above.
    const all = await api('POST', '/user/import-batches', { from_import: 'octocat/server' });
    expect(all.status).toBe(422);
    expect(all.body.errors.map((e: { field: string }) => e.field)).toEqual(
      [1, 2, 3, 4, 5].map((n) => `imports[${n}].repository`),
    );

    const created = await api('POST', '/user/import-batches', {
      from_import: 'octocat/server',
      projects: ['retag', { name: 'forks', repository: 'server-forks' }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ from_import: 'octocat/server', total: 2 });
    expect(created.body.imports.map((e: EntryJson) => [e.repository, e.project])).toEqual([
      ['server', 'retag'],
      ['server-forks', 'forks'],
    ]);
    await watch(created.body.id, allComplete, 2);
    const server = (await api('GET', '/repos/octocat/server/import')).body;
    expect(server).toMatchObject({ status: 'complete', vcs: 'subversion' });
  }, 90_000);
});

describe('GET /user/import-batches', () => {
  it('lists the batches newest first, paged with Link', async () => {
    const first = await api('GET', '/user/import-batches?per_page=1');
    expect(first.status).toBe(200);
    expect(first.body).toHaveLength(1);
    expect(first.body[0].imports).toBeUndefined();
    expect(first.headers.get('link')).toMatch(/page=2.*rel="next"/);
    const all = (await api('GET', '/user/import-batches')).body as { id: number }[];
    expect(all.map((batch) => batch.id)).toEqual([...all.map((batch) => batch.id)].sort((a, b) => b - a));
    expect(first.body[0].id).toBe(all[0]?.id);
  });

  it("answers 404 for a batch that is not the caller's", async () => {
    expect((await api('GET', '/user/import-batches/999999')).status).toBe(404);
    expect((await api('GET', '/user/import-batches/abc')).status).toBe(404);
  });
});

describe('the progress page of an import that found several projects', () => {
  it('imports the ones ticked, one repository each under the names typed, without JavaScript', async () => {
    const choices = (await waitingImport('site')).map((choice) => choice.human_name);
    const browser = new WebClient(stack.webUrl);
    await browser.get('/login');
    expect((await browser.post('/login', { login: 'octocat', password: 'octocat-pass-1' })).status).toBe(303);
    expect((await browser.get('/octocat/site/import')).status).toBe(200);
    expect(browser.lastHtml).toContain('Import several projects, one repository each');
    expect(browser.lastHtml.match(/type="checkbox"[^>]*name="project"/g)).toHaveLength(choices.length);
    const fields = Object.fromEntries(choices.map((name, n) => [`project-name-${n}`, name]));
    const first = choices.indexOf('mergeinfo');
    const second = choices.indexOf('relabel');

    // A default name already taken (the batch above made `relabel`): the page says so, nothing starts.
    const refused = await browser.post('/octocat/site/import/batch', {
      ...fields,
      count: String(choices.length),
      scope: 'ticked',
      project: [String(first), String(second)],
    });
    expect(refused.status).toBe(422);
    expect(browser.lastHtml).toContain('relabel already exists on this account');
    expect((await api('GET', '/repos/octocat/site/import')).body.status).toBe('detection_found_multiple');

    const sent = await browser.post('/octocat/site/import/batch', {
      ...fields,
      count: String(choices.length),
      scope: 'ticked',
      project: [String(first), String(second)],
      [`name-${second}`]: 'site-relabel',
    });
    expect(sent.status).toBe(303);
    const id = Number(/^\/imports\/batches\/(\d+)$/.exec(sent.headers.get('location') ?? '')?.[1]);
    expect(id).toBeGreaterThan(0);
    const { batch } = await watch(id, allComplete, 2);
    expect(batch.imports.map((e: EntryJson) => [e.repository, e.project])).toEqual([
      ['site', 'mergeinfo'],
      ['site-relabel', 'relabel'],
    ]);
  }, 90_000);
});
