import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeExecutionCommand, SFNClient } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { ENV } from '#shared/config';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient, remoteRefs } from '#test/git-client';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';

/**
 * Scheduled syncs (issue 27) through the local stack's scheduler: the handler the EventBridge rule
 * invokes in AWS, on a timer that ticks every 100 ms here. Its clock (the event's time, a
 * local-only setting) is moved ahead to make a sync due without waiting minutes; everything else
 * is public: the API, git against the hosted repository, the local Step Functions' executions.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let root: string;
let origin: OriginServer;
let locked: OriginServer;
let sfn: SFNClient;
/** How far the scheduler's clock runs ahead of this machine's. */
let aheadMs = 0;
const lockedAuth = { username: 'mirror', password: 'first-secret' };

const MINUTE = 60_000;
const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);

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

const importOf = async (repo: string) => (await api('GET', `/repos/octocat/${repo}/import`)).body;
const syncOf = async (repo: string) => (await api('GET', `/repos/octocat/${repo}/import/sync`)).body;

/** Whether the local Step Functions ran an execution of this name (`owner.repo.sync-N`). */
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

async function commitAtOrigin(bare: string, file: string): Promise<string> {
  const work = await mkdtemp(join(root, 'work-'));
  expect((await git(['clone', '-q', bare, work])).code).toBe(0);
  await writeFile(join(work, file), `${file}\n`);
  expect((await git(['add', '.'], { cwd: work })).code).toBe(0);
  expect((await git(['commit', '-qm', `add ${file}`], { cwd: work })).code).toBe(0);
  const pushed = await git(['push', '-q', 'origin', 'HEAD'], { cwd: work });
  expect(pushed.code, pushed.stderr).toBe(0);
  return (await git(['rev-parse', 'HEAD'], { cwd: work })).stdout.trim();
}

/** A repository imported from `originUrl` and following it every 5 minutes. */
async function importAndFollow(repo: string, body: Record<string, unknown>) {
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${token}` },
    body: JSON.stringify({ name: repo }),
  });
  expect(created.status).toBe(201);
  expect((await api('PUT', `/repos/octocat/${repo}/import`, { vcs: 'git', ...body })).status).toBe(201);
  await waitFor(
    `import of ${repo}`,
    () => importOf(repo),
    (record) => record.status === 'complete',
  );
  const following = await api('PUT', `/repos/octocat/${repo}/import/sync`, { interval_minutes: 5 });
  expect(following.status).toBe(200);
  return following.body;
}

beforeAll(async () => {
  stack = await startTestStack({ syncScheduler: { tickMs: 100, clock: () => Date.now() + aheadMs } });
  sfn = new SFNClient({
    endpoint: stack.stepFunctionsEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  git = await gitClient();
  root = await mkdtemp(join(tmpdir(), 'sync-schedule-'));
  await makeFixtureRepository(join(root, 'scheduled.git'), { commits: 6, branches: 1, annotatedTags: 1 });
  const lockedRoot = join(root, 'locked');
  await makeFixtureRepository(join(lockedRoot, 'locked.git'), { commits: 4, branches: 1, annotatedTags: 0 });
  origin = await serveGitHttp(root);
  locked = await serveGitHttp(lockedRoot, { auth: lockedAuth });
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await origin?.close();
  await locked?.close();
});

describe('the sync scheduler', () => {
  it('starts a due sync on its own, and a due sync with nothing new at the origin starts no execution', async () => {
    const originUrl = `${origin.url}/scheduled.git`;
    const hosted = `${stack.webUrl}/octocat/scheduled.git`;
    const following = await importAndFollow('scheduled', { vcs_url: originUrl });
    expect(Date.parse(following.next_sync_at) - Date.parse(following.following_since)).toBe(5 * MINUTE);
    // Not due yet: the scheduler ticks, nothing starts.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await executionExists('octocat.scheduled.sync-2')).toBe(false);

    const newTip = await commitAtOrigin(join(root, 'scheduled.git'), 'scheduled.txt');
    aheadMs = 6 * MINUTE;
    const synced = await waitFor(
      'the scheduled sync',
      () => syncOf('scheduled'),
      (sync) => sync.last_sync?.status === 'succeeded',
    );
    expect(await executionExists('octocat.scheduled.sync-2')).toBe(true);
    expect(synced).toMatchObject({
      state: 'following',
      origin_revision: newTip,
      last_sync: { status: 'succeeded', new_commits: 1 },
    });
    expect(await remoteRefs(git, hosted)).toEqual(await remoteRefs(git, originUrl));
    expect(Date.parse(synced.last_synced_at)).toBeGreaterThan(Date.parse(following.following_since));
    // The schedule moved on: an interval after the check that started the sync.
    expect(Date.parse(synced.next_sync_at)).toBe(Date.parse(synced.last_checked_at) + 5 * MINUTE);
    expect(Date.parse(synced.next_sync_at)).toBeGreaterThan(Date.parse(following.next_sync_at));

    // Due again, with nothing new at the origin: one check of its refs, no execution.
    aheadMs = 12 * MINUTE;
    const checked = await waitFor(
      'the check',
      () => syncOf('scheduled'),
      (sync) => Date.parse(sync.last_checked_at) > Date.parse(synced.last_checked_at),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await executionExists('octocat.scheduled.sync-3')).toBe(false);
    expect((await importOf('scheduled')).status).toBe('complete');
    expect(checked).toMatchObject({
      last_synced_at: synced.last_synced_at,
      last_sync: synced.last_sync,
      origin_revision: newTip,
    });
    expect(Date.parse(checked.next_sync_at)).toBe(Date.parse(checked.last_checked_at) + 5 * MINUTE);
  });

  it('keeps following through auth_failed, starts nothing while it waits, and resumes with new credentials', async () => {
    const originUrl = `${locked.url}/locked.git`;
    await importAndFollow('locked', {
      vcs_url: originUrl,
      vcs_username: lockedAuth.username,
      vcs_password: lockedAuth.password,
    });
    const newTip = await commitAtOrigin(join(root, 'locked', 'locked.git'), 'locked.txt');
    // The origin starts refusing the credentials the import has.
    (lockedAuth as { password: string }).password = 'second-secret';
    aheadMs += 6 * MINUTE;
    await waitFor(
      'auth_failed',
      () => importOf('locked'),
      (record) => record.status === 'auth_failed',
    );
    const waiting = await syncOf('locked');
    expect(waiting).toMatchObject({
      state: 'following',
      last_sync: { status: 'auth_failed', new_commits: 0, error_message: expect.stringContaining('PATCH') },
    });
    // Due again while it waits: nothing new starts.
    aheadMs += 6 * MINUTE;
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await executionExists('octocat.locked.sync-3')).toBe(false);
    expect((await importOf('locked')).status).toBe('auth_failed');

    // The clock back to before the next due time: the resumed sync started without a fingerprint
    // (the check was refused too), so a due check right after it would sync again, and the outcome
    // read below would be that one's (nothing new).
    aheadMs -= 6 * MINUTE;
    const patched = await api('PATCH', '/repos/octocat/locked/import', {
      vcs_username: lockedAuth.username,
      vcs_password: 'second-secret',
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    await waitFor(
      'the resumed sync',
      () => importOf('locked'),
      (record) => record.status === 'complete',
    );
    expect(await syncOf('locked')).toMatchObject({
      state: 'following',
      origin_revision: newTip,
      last_sync: { status: 'succeeded', new_commits: 1 },
    });
    expect(await executionExists('octocat.locked.sync-3')).toBe(false);
    const authorized = `http://${lockedAuth.username}:second-secret@${originUrl.slice('http://'.length)}`;
    expect(await remoteRefs(git, `${stack.webUrl}/octocat/locked.git`)).toEqual(
      await remoteRefs(git, authorized),
    );
  });
});
