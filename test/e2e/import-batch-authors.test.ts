import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importStateMachine } from '#local/import-workflow';
import { type SvnServer, serveSvn } from '#local/svn-origins';
import { makeDumpProjectsRoot } from '#local/svn-projects-root';
import { ENV } from '#shared/config';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient } from '#test/git-client';
import { type HeldStep, heldStep } from '#test/held-steps';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';
import { WebClient } from '#test/web-client';

/**
 * One authors file for a whole batch (issue 37, item 4) through HTTP against the local stack and
 * its real workflow: a batch of five Subversion projects (real dumps, served by svnserve), two at a
 * time. The first two complete; the raw step of the next two is held, so they stay `importing`;
 * the fifth waits `queued`. The file is parsed once and applied to the two complete imports (one
 * rewrite each, seen in a clone), the three others are skipped with their reason.
 */

process.env[ENV.importBatchConcurrency] = '2';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let token: string;
let otherToken: string;
let work: string;
let svn: SvnServer;
let held: HeldStep;
let batchId: number;
const cleanup: string[] = [];

// deletion: john.doe; mergeinfo: pburba; replace: Daniel, pburba; relabel and forks: pmezard.
const PROJECTS = ['deletion', 'mergeinfo', 'replace', 'relabel', 'forks'] as const;
const FILE = [
  '# the batch',
  'john.doe = John Doe <john@example.org>',
  'pburba = Paul Burba <paul@example.org>',
  'nobody = No Body <nobody@example.org>',
  '',
].join('\n');

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);

interface EntryJson {
  repository: string;
  state: string;
  status: string | null;
}

async function batchUntil(done: (entries: EntryJson[]) => boolean, timeoutMs = 60_000): Promise<EntryJson[]> {
  let last: EntryJson[] = [];
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
    last = (await api('GET', `/user/import-batches/${batchId}`)).body.imports;
    if (done(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the batch did not get there: ${JSON.stringify(last)}`);
}

const statusOf = (entries: EntryJson[], repository: string) =>
  entries.find((entry) => entry.repository === repository)?.status;

/** `name <email>` of every commit of a hosted repository, cloned over HTTP. */
async function hostedIdentities(repo: string): Promise<Set<string>> {
  const git = await gitClient();
  const dir = await mkdtemp(join(tmpdir(), 'batch-authors-clone-'));
  cleanup.push(dir);
  const clone = await git(['clone', '-q', `${stack.webUrl}/octocat/${repo}.git`, dir]);
  expect(clone.code, clone.stderr).toBe(0);
  const log = await git(['log', '--all', '--format=%an <%ae>'], { cwd: dir });
  return new Set(log.stdout.trim().split('\n'));
}

const authorsOf = async (repo: string) =>
  (
    (await api('GET', `/repos/octocat/${repo}/import/authors`)).body as {
      remote_name: string;
      email: string;
    }[]
  )
    .map((author) => `${author.remote_name} ${author.email}`)
    .sort();

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'import-batch-authors-'));
  await makeDumpProjectsRoot(work, PROJECTS);
  svn = await serveSvn(work);
  held = heldStep(await importStateMachine(), 'ImportRawHistory');
  held.hold('replace', 'relabel');
  stack = await startTestStack({ importStateMachine: held.machine });
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
  const other = await createUser(stack.endpointsFile, 'hubot');
  otherToken = (await personalToken(stack.baseUrl, other.auth, ['repo'])).token;
  const created = await api('POST', '/user/import-batches', {
    vcs_url: svn.url('root'),
    vcs: 'subversion',
    projects: [...PROJECTS],
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  batchId = created.body.id;
  await batchUntil(
    (entries) =>
      statusOf(entries, 'deletion') === 'complete' &&
      statusOf(entries, 'mergeinfo') === 'complete' &&
      held.waiting.length === 2,
  );
}, 120_000);

afterAll(async () => {
  held?.release();
  await stack?.stop();
  await svn?.close();
  await Promise.all(
    [work, ...cleanup].filter(Boolean).map((dir) => rm(dir, { recursive: true, force: true })),
  );
});

describe('PUT /user/import-batches/:batch_id/authors', () => {
  it('refuses a bad file once, naming each bad line, and changes no import', async () => {
    const before = await authorsOf('deletion');
    const refused = await api('PUT', `/user/import-batches/${batchId}/authors`, {
      content: 'john.doe = John Doe <john@example.org>\nbroken line\npburba = Paul <not-an-email>\n',
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({
      message: 'Validation Failed',
      documentation_url: expect.any(String),
    });
    expect(refused.body.errors).toEqual([
      expect.objectContaining({ resource: 'AuthorsFile', field: 'content', code: 'invalid', line: 2 }),
      expect.objectContaining({ resource: 'AuthorsFile', field: 'content', code: 'invalid', line: 3 }),
    ]);
    expect(await authorsOf('deletion')).toEqual(before);
    expect(statusOf(await batchUntil(() => true), 'deletion')).toBe('complete');
    expect(
      (await api('PUT', `/user/import-batches/${batchId}/authors`, { format: 'yaml', content: 'x' })).status,
    ).toBe(422);
  });

  it("answers 404 for a batch that is not the caller's", async () => {
    const other = await importApiCall(
      stack.baseUrl,
      otherToken,
      'PUT',
      `/user/import-batches/${batchId}/authors`,
      {
        content: FILE,
      },
    );
    expect(other.status).toBe(404);
    expect((await api('PUT', '/user/import-batches/999999/authors', { content: FILE })).status).toBe(404);
  });

  it('maps the complete imports, skips the others with their reason, and lists what no import has', async () => {
    const applied = await api('PUT', `/user/import-batches/${batchId}/authors`, { content: FILE });
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    expect(applied.body).toMatchObject({ id: batchId, format: 'authors_txt' });
    expect(applied.body.not_in_any_history).toEqual([
      { line: 4, origin: 'nobody', name: 'No Body', email: 'nobody@example.org' },
    ]);
    const outcomes = applied.body.outcomes;
    expect(outcomes.map((o: { repository: string; outcome: string }) => [o.repository, o.outcome])).toEqual([
      ['deletion', 'applied'],
      ['mergeinfo', 'applied'],
      ['replace', 'skipped'],
      ['relabel', 'skipped'],
      ['forks', 'skipped'],
    ]);
    expect(outcomes[0]).toMatchObject({
      rewriting: true,
      mapped: 1,
      changed: 1,
      not_in_history: 2,
      not_in_file: [],
    });
    expect(outcomes[1]).toMatchObject({
      rewriting: true,
      mapped: 1,
      changed: 1,
      not_in_history: 2,
      not_in_file: [],
    });
    expect(outcomes[2].reason).toMatch(/^still importing \(importing\)/);
    expect(outcomes[3].reason).toMatch(/^still importing/);
    expect(outcomes[4].reason).toMatch(/^queued/);

    const entries = await batchUntil(
      (list) => statusOf(list, 'deletion') === 'complete' && statusOf(list, 'mergeinfo') === 'complete',
    );
    expect(statusOf(entries, 'forks')).toBeNull();
    expect(await hostedIdentities('deletion')).toEqual(new Set(['John Doe <john@example.org>']));
    expect(await hostedIdentities('mergeinfo')).toEqual(new Set(['Paul Burba <paul@example.org>']));

    // Sent again: nothing changes, nothing is rewritten.
    const again = await api('PUT', `/user/import-batches/${batchId}/authors`, { content: FILE });
    expect(again.body.outcomes[0]).toMatchObject({ outcome: 'applied', changed: 0, rewriting: false });
  }, 90_000);
});

describe('the dashboard form "Authors file for all imports"', () => {
  it('posts the file without JavaScript and answers each import and the batch-wide list', async () => {
    const browser = new WebClient(stack.webUrl);
    await browser.get('/login');
    expect((await browser.post('/login', { login: 'octocat', password: 'octocat-pass-1' })).status).toBe(303);
    expect((await browser.get(`/imports/batches/${batchId}`)).status).toBe(200);
    expect(browser.lastHtml).toContain('Authors file for all imports');
    expect(browser.lastHtml).toContain(`action="/imports/batches/${batchId}/authors"`);

    const refused = await browser.post(`/imports/batches/${batchId}/authors`, { content: 'broken line\n' });
    expect(refused.status).toBe(422);
    expect(browser.lastHtml).toContain('The authors file was refused; no import changed.');
    expect(browser.lastHtml).toContain('Line 1: ');

    const answer = await browser.post(`/imports/batches/${batchId}/authors`, {
      format: 'csv',
      content: 'origin,name,email\njohn.doe,Johnny Doe,johnny@example.org\nghost,Ghost,ghost@example.org\n',
    });
    expect(answer.status).toBe(200);
    const page = browser.lastHtml;
    expect(page).toContain('Applied to 2 imports; 3 skipped');
    expect(page).toMatch(
      /id="batch-authors-0" data-outcome="applied">.*1 author mapped, history being rewritten once/,
    );
    expect(page).toMatch(
      /id="batch-authors-1" data-outcome="applied">.*nothing changed.*not in the file: <code>pburba<\/code>/,
    );
    expect(page).toMatch(/id="batch-authors-4" data-outcome="skipped">.*skipped, queued/);
    expect(page).toContain('href="/octocat/deletion/import/authors-file?format=mailmap"');
    expect(page).toMatch(/id="batch-authors-not-in-any"><li>Line 3: <code>ghost<\/code>/);

    // Without a session: sign in and come back (nothing applied).
    const anonymous = new WebClient(stack.webUrl);
    await anonymous.get('/login');
    const away = await anonymous.post(`/imports/batches/${batchId}/authors`, {
      content: 'x = X <x@example.org>',
    });
    expect(away.status).toBe(303);
  });
});
