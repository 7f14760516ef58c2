import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextId } from '#data/counters';
import { createBatch, takeTurn } from '#data/import-batches';
import { enterStatus, recordProgress, setImportReport } from '#data/imports/progress';
import { createImport } from '#data/imports/requests';
import { storeRevisionMap } from '#data/imports/revision-map';
import { followOrigin, recordSyncOutcome } from '#data/imports/sync';
import { findingOf } from '#domain/import-report';
import { DEFAULT_IMPORT_CHOICES } from '#domain/imports';
import { createUser } from '#test/fixtures';
import { startTestStack } from '#test/stack';
import { signedIn, WebClient } from '#test/web-client';

/*
 * The batch dashboard (issue 37, item 5) over HTTP with a web session, at 200 imports: a batch
 * made with the batch service's own data functions (repositories, entries, turns) and imports put
 * in every state with the worker's data functions, so no workflow runs (the idle fixture stands in
 * for it: a sync started from the dashboard starts and stays running). What the page shows is
 * compared with what was written; the actions on all go through the page's forms with CSRF.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
type User = Awaited<ReturnType<typeof createUser>>;
let stack: Stack;
let owner: User;
let other: User;

const IDLE = fileURLToPath(new URL('../fixtures/import-idle.asl.json', import.meta.url));
const ENTRIES = 200;
const QUEUED = 20;

beforeAll(async () => {
  stack = await startTestStack({ importStateMachine: { name: 'Import', definitionFile: IDLE, tasks: {} } });
  [owner, other] = await Promise.all([
    createUser(stack.endpointsFile, 'migrator', 'migrator-pass-1'),
    createUser(stack.endpointsFile, 'bystander', 'bystander-pass-1'),
  ]);
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

/** Runs `work` over `items`, `width` at a time. */
async function eachOf<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      for (let n = next++; n < items.length; n = next++) await work(items[n] as T);
    }),
  );
}

const repoName = (index: number) => `proj-${String(index).padStart(3, '0')}`;

/**
 * What each entry is, by its index: the last tenth (`QUEUED` of 200) wait their turn; of the others, by index
 * modulo 10: 0 failed, 1 importing at 40%, 2 pushing, 3 complete and not following, 4 following
 * with a failed last sync, 5–9 complete and following (5 and 6 synced, with 3 new commits).
 */
const kindOf = (index: number, size = ENTRIES) =>
  index >= size - size / 10
    ? 'queued'
    : (['failed', 'importing', 'pushing', 'complete', 'sync-failed'][index % 10] ?? 'following');

async function seedBatch(login: string, size = ENTRIES, prefix = 'proj'): Promise<number> {
  const repoName = (index: number) => `${prefix}-${String(index).padStart(3, '0')}`;
  const importIds = await Promise.all(Array.from({ length: size }, () => nextId('import')));
  const created = await createBatch({
    ownerLogin: login,
    options: {
      useLfs: 'undecided',
      choices: DEFAULT_IMPORT_CHOICES,
      private: false,
      follow: null,
      concurrency: size,
    },
    hasCredentials: false,
    entries: importIds.map((importId, index) => ({
      index,
      repository: repoName(index),
      vcs: 'subversion',
      vcsUrl: 'svn://127.0.0.1:9/root',
      project: { vcs: 'subversion', humanName: repoName(index), path: repoName(index) },
      importId,
    })),
  });
  if (created.kind !== 'created') throw new Error(`batch not created: ${created.kind}`);
  const batchId = created.batch.id;
  await eachOf(
    importIds.map((importId, index) => ({ importId, index })),
    8,
    async ({ importId, index }) => {
      const kind = kindOf(index, size);
      if (kind === 'queued') return;
      const repo = repoName(index);
      expect(await takeTurn(login, batchId, index, size)).toMatchObject({ entry: { state: 'started' } });
      const made = await createImport({
        ownerLogin: login,
        repoName: repo,
        importId,
        vcs: 'subversion',
        vcsUrl: `svn://127.0.0.1:9/root/${repo}`,
        status: 'importing',
        choices: DEFAULT_IMPORT_CHOICES,
        batch: { id: batchId, entry: index },
      });
      if (made.kind !== 'created') throw new Error(`import not created: ${made.kind}`);
      const { attempt } = made.record;
      if (kind === 'failed') {
        await enterStatus(login, repo, attempt, 'error', {
          failedStep: 'raw',
          errorMessage: 'svn: E170013: Unable to connect',
        });
        return;
      }
      await recordProgress(login, repo, attempt, { percent: 40, commitCount: 100 });
      if (kind === 'importing') return;
      if (kind === 'pushing') {
        await enterStatus(login, repo, attempt, 'pushing');
        return;
      }
      await setImportReport(login, repo, importId, attempt, {
        rawDone: true,
        findings: {
          renamed_refs: findingOf(
            index % 2 === 0
              ? [{ kind: 'branch', origin_name: 'a?', ref: 'refs/heads/a-', reason: 'invalid' }]
              : [],
          ),
          empty_directories: findingOf(Array.from({ length: index % 4 }, (_, n) => ({ path: `d${n}/` }))),
        },
      });
      if (index < 10)
        await storeRevisionMap(
          login,
          repo,
          importId,
          attempt,
          Array.from({ length: 150 }, (_, n) => ({
            originRevision: String(n + 1),
            commit: `${String(index).padStart(2, '0')}${'c'.repeat(38)}`,
          })),
        );
      await enterStatus(login, repo, attempt, 'complete');
      if (kind === 'complete') return;
      await followOrigin(login, repo, importId, 60, 100, undefined);
      if (kind === 'sync-failed')
        await recordSyncOutcome(login, repo, importId, {
          errorMessage: 'svn: E170013: Unable to connect to a repository at URL',
        });
      else if (index % 10 === 5 || index % 10 === 6)
        await recordSyncOutcome(login, repo, importId, { commitCount: 103 });
    },
  );
  return batchId;
}

const signIn = (user: User) => signedIn(stack.webUrl, user);

/** Each row's id, group and cells as text, in page order. */
function rows(page: string) {
  return [...page.matchAll(/<tr id="entry-(\d+)" data-group="(\w+)"[^>]*>([\s\S]*?)<\/tr>/g)].map(
    (match) => ({
      index: Number(match[1]),
      group: match[2],
      markup: match[3] ?? '',
      text: (match[3] ?? '')
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    }),
  );
}

const countOf = (page: string, id: string) =>
  Number(new RegExp(`<li id="count-${id}"><strong>(\\d+)</strong>`).exec(page)?.[1]);

describe('the batch dashboard', () => {
  let batchId: number;
  let browser: WebClient;
  let path: string;

  beforeAll(async () => {
    batchId = await seedBatch(owner.login);
    browser = await signIn(owner);
    path = `/imports/batches/${batchId}`;
  }, 120_000);

  it('shows 200 imports in compact rows, problems first, with counts at the top; measured', async () => {
    const started = performance.now();
    const response = await browser.get(path);
    const ms = performance.now() - started;
    expect(response.status).toBe(200);
    const page = browser.lastHtml;
    console.log(`dashboard at ${ENTRIES} entries: ${Math.round(ms)} ms, ${Buffer.byteLength(page)} bytes`);
    expect(Buffer.byteLength(page)).toBeLessThan(250_000);

    const shown = rows(page);
    expect(shown).toHaveLength(ENTRIES);
    const kinds = Array.from({ length: ENTRIES }, (_, index) => kindOf(index));
    const problems = kinds.filter((kind) => kind === 'failed' || kind === 'sync-failed').length;
    const running = kinds.filter((kind) => kind === 'importing' || kind === 'pushing').length;
    expect(countOf(page, 'problem')).toBe(problems);
    expect(countOf(page, 'running')).toBe(running);
    expect(countOf(page, 'queued')).toBe(QUEUED);
    expect(countOf(page, 'complete')).toBe(ENTRIES - QUEUED - problems - running);
    expect(countOf(page, 'following')).toBe(
      kinds.filter((kind) => kind === 'following' || kind === 'sync-failed').length,
    );
    // Problems first, then importing, queued, complete; each group in the batch's order.
    const order = ['problem', 'running', 'queued', 'complete'];
    const groups = shown.map((row) => order.indexOf(row.group ?? ''));
    expect(groups).toEqual([...groups].sort((a, b) => a - b));
    expect(shown.slice(0, problems).every((row) => row.group === 'problem')).toBe(true);

    const byIndex = new Map(shown.map((row) => [row.index, row]));
    expect(byIndex.get(0)?.text).toContain('Failed (raw)');
    expect(byIndex.get(1)?.text).toMatch(/Importing 40%/);
    expect(byIndex.get(2)?.text).toMatch(/Pushing/);
    expect(byIndex.get(3)?.text).toMatch(/Complete 100% 3 empty dirs Off/);
    expect(byIndex.get(4)?.text).toContain('Failed: svn: E170013: Unable to connect to a repository at URL');
    expect(byIndex.get(4)?.text).toContain('Behind: the last sync failed');
    expect(byIndex.get(5)?.text).toMatch(
      /Following \(every hour\) (just now|1 min ago) ?, 3 new commits Matched (just now|1 min ago)/,
    );
    expect(byIndex.get(7)?.text).toMatch(/Following \(every hour\) Never Not checked yet/);
    expect(byIndex.get(ENTRIES - 1)?.text).toBe(`${repoName(ENTRIES - 1)} Queued — — Off — —`);
    // A started import links to its progress page; a queued one has none yet.
    expect(byIndex.get(3)?.markup).toContain(`<a href="/${owner.login}/${repoName(3)}/import">`);
    expect(byIndex.get(ENTRIES - 1)?.markup).not.toContain('<a ');
    // Labels for the narrow layout, where each row is a card.
    expect(byIndex.get(3)?.markup).toContain('data-label="Findings"');
    expect(page).toContain('1,050 revisions');
    expect(byIndex.get(6)?.text).toContain('1 renamed ref, 2 empty dirs');
  });

  it('answers the same 404 page to another user and to a batch that does not exist; signs a visitor in first', async () => {
    const outsider = await signIn(other);
    for (const target of [path, '/imports/batches/999999']) {
      const response = await outsider.get(target);
      expect(response.status).toBe(404);
      expect(outsider.lastHtml).toContain('There is no import batch here that you can see.');
      expect(outsider.lastHtml).not.toContain('proj-');
    }
    const visitor = new WebClient(stack.webUrl);
    const response = await visitor.get(path);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe(`/login?return_to=${encodeURIComponent(path)}`);
    expect((await outsider.post(`${path}/sync`, {})).status).toBe(404);
  });

  it('lists the batch on /imports/batches', async () => {
    expect((await browser.get('/imports/batches')).status).toBe(200);
    expect(browser.lastHtml).toContain(`<a href="${path}">Batch ${batchId}</a>`);
  });

  it('downloads the revision maps as one CSV with a repository column; a part past the last is 404', async () => {
    const response = await browser.get(`${path}/revisions.csv?part=1`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const lines = (await response.text()).split('\r\n');
    expect(lines[0]).toBe('repository,origin_revision,commit');
    expect(lines).toHaveLength(1 + 7 * 150 + 1);
    expect(lines[1]).toBe(`${repoName(3)},1,03${'c'.repeat(38)}`);
    expect(new Set(lines.slice(1, -1).map((line) => line.split(',')[0]))).toEqual(
      new Set([3, 4, 5, 6, 7, 8, 9].map(repoName)),
    );
    expect((await browser.get(`${path}/revisions.csv?part=2`)).status).toBe(404);
  });

  it('acts on all imports through its forms: refuses without CSRF, syncs now, changes the interval, cuts over after a confirmation and shows each refusal', async () => {
    // A batch of 20 of its own: the actions go through every import one by one.
    const SIZE = 20;
    const small = await seedBatch(owner.login, SIZE, 'act');
    const path = `/imports/batches/${small}`;
    await browser.get(path);
    expect((await browser.post(`${path}/sync`, {}, { csrf: null })).status).toBe(403);
    const following = Array.from({ length: SIZE }, (_, index) => kindOf(index, SIZE)).filter(
      (kind) => kind === 'following' || kind === 'sync-failed',
    ).length;

    const interval = await browser.post(`${path}/follow`, { schedule: 'interval', interval_minutes: '120' });
    expect(interval.status).toBe(303);
    expect(interval.headers.get('location')).toMatch(
      new RegExp(`^${path}\\?notice=schedule&done=\\d+&skipped=\\d+$`),
    );
    await browser.get(interval.headers.get('location') ?? '');
    expect(browser.lastHtml).toContain('the new schedule');
    // Complete imports that did not follow now do.
    expect(countOf(browser.lastHtml, 'following')).toBeGreaterThan(following);
    expect(browser.lastHtml).toContain('Following <span class="muted">(every 2 hours)</span>');
    const nowFollowing = countOf(browser.lastHtml, 'following');

    const wrong = await browser.post(`${path}/follow`, { schedule: 'interval', interval_minutes: '2' });
    expect(wrong.status).toBe(422);
    expect(browser.lastHtml).toContain('Enter the minutes between syncs');

    await browser.get(path);
    const synced = await browser.post(`${path}/sync`, {});
    expect(synced.status).toBe(303);
    expect(synced.headers.get('location')).toBe(
      `${path}?notice=sync-started&done=${nowFollowing}&skipped=${SIZE - nowFollowing}`,
    );

    // The syncs just started are still running (the idle workflow): cut-over refuses them, each named.
    await browser.get(path);
    const question = await browser.post(`${path}/cut-over`, {});
    expect(question.status).toBe(200);
    expect(browser.lastHtml).toContain(`Cut over ${nowFollowing} repositories of batch ${small}?`);
    const refused = await browser.post(`${path}/cut-over`, { confirm: 'cut-over' });
    expect(refused.status).toBe(200);
    expect(browser.lastHtml).toContain(`${nowFollowing} of ${SIZE} imports refused.`);
    expect(browser.lastHtml).toMatch(/<li><strong>act-\d{3}<\/strong>: A sync attempt is under way/);
  });
});
