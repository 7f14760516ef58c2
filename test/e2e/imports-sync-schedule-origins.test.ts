import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DescribeExecutionCommand, SFNClient } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HG_FIXTURE_USERS, makeHgFixture, serveHg } from '#local/hg-origins';
import { makeSvnRepository } from '#local/svn-fixtures';
import { type SvnServer, serveSvn } from '#local/svn-origins';
import { tfvcHistory } from '#local/tfvc-alpha';
import { serveTfvc, type TfvcProjectSpec, type TfvcServer } from '#local/tfvc-origin';
import { ENV } from '#shared/config';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient, remoteRefs } from '#test/git-client';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';

/**
 * Scheduled syncs of Subversion, Mercurial and TFVC origins (issue 27), served on 127.0.0.1: a
 * due sync with nothing new at the origin only records its check (the origin's fingerprint is
 * unchanged), and once the origin has moved on the next due sync runs and publishes it. The
 * scheduler's clock (a local-only setting) is moved ahead to make a sync due without waiting.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let sfn: SFNClient;
let root: string;
const servers: { close(): Promise<void> }[] = [];
/** How far the scheduler's clock runs ahead of this machine's. */
let aheadMs = 0;

const MINUTE = 60_000;
const run = promisify(execFile);
const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);
const importOf = async (repo: string) => (await api('GET', `/repos/octocat/${repo}/import`)).body;
const syncOf = async (repo: string) => (await api('GET', `/repos/octocat/${repo}/import/sync`)).body;
const hostedRefs = (repo: string) => remoteRefs(git, `${stack.webUrl}/octocat/${repo}.git`);

async function waitFor<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 45_000;
  let last = await read();
  while (!done(last)) {
    if (Date.now() > deadline) throw new Error(`${what}: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    last = await read();
  }
  return last;
}

async function executionExists(name: string): Promise<boolean> {
  const machine = process.env[ENV.importStateMachineArn] ?? '';
  const executionArn = `${machine.replace(':stateMachine:', ':execution:')}:${name}`;
  return sfn.send(new DescribeExecutionCommand({ executionArn })).then(
    () => true,
    (error: Error) => {
      if (error.name === 'ExecutionDoesNotExist') return false;
      throw error;
    },
  );
}

/** The scheduler's clock moves past the next due time; resolves with the sync once it ran. */
async function dueSyncRuns(repo: string, after: string | null, sync: number) {
  aheadMs += 6 * MINUTE;
  const synced = await waitFor(
    `sync ${sync} of ${repo}`,
    () => syncOf(repo),
    (body) =>
      body.last_sync?.status === 'succeeded' &&
      (after === null || Date.parse(body.last_synced_at) > Date.parse(after)),
  );
  expect(await executionExists(`octocat.${repo}.sync-${sync}`)).toBe(true);
  return synced;
}

/**
 * The whole scenario for one origin: imported and followed; the origin moves on (`gainFirst`), the
 * due sync publishes it; due again with nothing new, only the check is recorded; the origin moves
 * on again (`gainSecond`), the next due sync publishes that.
 */
async function followThroughSchedule(
  repo: string,
  body: Record<string, unknown>,
  gainFirst: () => Promise<void>,
  gainSecond: () => Promise<void>,
) {
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${token}` },
    body: JSON.stringify({ name: repo }),
  });
  expect(created.status).toBe(201);
  const started = await api('PUT', `/repos/octocat/${repo}/import`, body);
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  await waitFor(
    `import of ${repo}`,
    () => importOf(repo),
    (record) => record.status === 'complete',
  );
  // The scheduler's clock back to this machine's: the new schedule is not due before the origin moves.
  aheadMs = 0;
  expect((await api('PUT', `/repos/octocat/${repo}/import/sync`, { interval_minutes: 5 })).status).toBe(200);
  const imported = await hostedRefs(repo);

  await gainFirst();
  const first = await dueSyncRuns(repo, null, 2);
  expect(first.last_sync.new_commits).toBeGreaterThan(0);
  const synced = await hostedRefs(repo);
  expect(synced).not.toEqual(imported);

  // Due again, nothing new at the origin: a check, no execution, the hosted repository as it was.
  aheadMs += 6 * MINUTE;
  const checked = await waitFor(
    `the check of ${repo}`,
    () => syncOf(repo),
    (sync) => Date.parse(sync.last_checked_at) > Date.parse(first.last_checked_at),
  );
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(await executionExists(`octocat.${repo}.sync-3`)).toBe(false);
  expect((await importOf(repo)).status).toBe('complete');
  expect(checked).toMatchObject({
    last_synced_at: first.last_synced_at,
    last_sync: first.last_sync,
    origin_revision: first.origin_revision,
  });
  expect(Date.parse(checked.next_sync_at)).toBe(Date.parse(checked.last_checked_at) + 5 * MINUTE);

  await gainSecond();
  await dueSyncRuns(repo, first.last_synced_at, 3);
  const after = await hostedRefs(repo);
  expect(after).not.toEqual(synced);
  return { synced, after };
}

beforeAll(async () => {
  stack = await startTestStack({ syncScheduler: { tickMs: 100, clock: () => Date.now() + aheadMs } });
  sfn = new SFNClient({
    endpoint: stack.stepFunctionsEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  git = await gitClient();
  root = await mkdtemp(join(tmpdir(), 'sync-schedule-origins-'));
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  for (const server of servers) await server.close();
});

describe('the sync scheduler, for origins other than Git', () => {
  it('Subversion (svnserve): a new revision starts a sync, nothing new starts none, a new branch starts one', async () => {
    const made = await makeSvnRepository(join(root, 'svn'));
    const svnserve: SvnServer = await serveSvn(join(root, 'svn'));
    servers.push(svnserve);
    const home = await mkdtemp(join(root, 'svn-home-'));
    const svnmucc = (...args: string[]) =>
      run(
        'svnmucc',
        [
          '--non-interactive',
          '--config-dir',
          join(home, 'cfg'),
          '-U',
          made.url,
          '--username',
          'ada',
          ...args,
        ],
        { env: { PATH: process.env.PATH ?? '', HOME: home, LC_ALL: 'C' } },
      );
    const file = join(home, 'NEWS');
    await writeFile(file, 'news\n');
    const { after } = await followThroughSchedule(
      'svn-scheduled',
      { vcs: 'subversion', vcs_url: svnserve.url('repo') },
      async () => {
        await svnmucc('-m', 'Add NEWS', 'put', file, 'trunk/NEWS');
      },
      async () => {
        await svnmucc('-m', 'Branch next', 'cp', 'HEAD', 'trunk', 'branches/next');
      },
    );
    expect(after.some((line) => line.endsWith(' refs/heads/next'))).toBe(true);
  });

  it('Mercurial (hg serve): a new changeset starts a sync, nothing new starts none, a moved bookmark starts one', async () => {
    const repoDir = join(root, 'hg');
    await makeHgFixture(repoDir);
    const served = await serveHg({ repo: repoDir });
    servers.push(served);
    const hg = (...args: string[]) =>
      run('hg', args, {
        cwd: repoDir,
        env: { PATH: process.env.PATH ?? '', HOME: repoDir, HGRCPATH: '', HGPLAIN: '1', LC_ALL: 'C' },
      });
    const { synced, after } = await followThroughSchedule(
      'hg-scheduled',
      { vcs: 'mercurial', vcs_url: served.url },
      async () => {
        await writeFile(join(repoDir, 'c.txt'), 'five\n');
        await hg('add', 'c.txt');
        await hg('commit', '-m', 'five', '-u', HG_FIXTURE_USERS.ada, '-d', '1700000500 0');
      },
      async () => {
        // No new changeset: only the bookmark moves (from revision 2 to revision 1).
        await hg('bookmark', '-f', '-r', '1', 'feature');
      },
    );
    const feature = (refs: string[]) => refs.find((line) => line.endsWith(' refs/heads/feature'));
    expect(feature(after)).toBeDefined();
    expect(feature(after)).not.toEqual(feature(synced));
  });

  it('TFVC (the REST stand-in): new changesets start a sync, nothing new starts none', async () => {
    const [alpha, beta] = tfvcHistory() as [TfvcProjectSpec, TfvcProjectSpec];
    const ids = alpha.changesets.map((changeset) => changeset.id).sort((a, b) => a - b);
    const upTo = (count: number): TfvcProjectSpec => ({
      ...alpha,
      changesets: alpha.changesets.filter((changeset) => ids.indexOf(changeset.id) < count),
    });
    const origin: TfvcServer = await serveTfvc({ projects: [upTo(ids.length - 4), beta] });
    servers.push(origin);
    await followThroughSchedule(
      'tfvc-scheduled',
      { vcs: 'tfvc', vcs_url: origin.collectionUrl, tfvc_project: 'Alpha' },
      async () => origin.replaceHistory([upTo(ids.length - 2), beta]),
      async () => origin.replaceHistory([upTo(ids.length), beta]),
    );
  });
});
