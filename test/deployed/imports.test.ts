import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeExecutionCommand, SFNClient } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixtureRepository, writeLargeCommit } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { makeHgFixture, serveHg } from '#local/hg-origins';
import { makeSvnRepository } from '#local/svn-fixtures';
import { type SvnServer, serveSvn } from '#local/svn-origins';
import { tfvcHistory } from '#local/tfvc-alpha';
import { serveTfvc, type TfvcServer } from '#local/tfvc-origin';
import { ENV } from '#shared/config';
import { ORIGIN_CHECK_TIMEOUT_MS, SYNC_SCHEDULER_TIMEOUT_SECONDS } from '#shared/sync-scheduler';
import { type AsDeployed, LAMBDA_USER, startAsDeployed } from '#test/as-deployed';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient, remoteRefs } from '#test/git-client';
import { importApiCall } from '#test/import-api';
import { commandLine, descendantsOf, processTable } from '#test/process-tree';

/**
 * Imports from every kind of origin, run by the worker image as AWS runs it (see
 * `test/support/as-deployed.ts`): the image's own root file system, tools and Node.js, its
 * bundles under `aws-lambda-ric`, Lambda's user on files the access point's user owns, a
 * read-only root and a 512 MB `/tmp`; then clone and push through the Git front end, started
 * from the same image as its task definition says. The sync scheduler is the function the
 * template's rule targets, invoked with the rule's event every second; its clock (the event's
 * `time`) runs `aheadMs` ahead to make a followed import due without waiting its interval.
 */

const LARGE_FILE_BYTES = 256 * 1024;
const PASSWORD = 'deployed-pass-1';
const MINUTE = 60_000;

let deployed: AsDeployed;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let work: string;
let gitOrigin: OriginServer;
let hgOrigin: OriginServer;
let svnOrigin: SvnServer;
let tfvcOrigin: TfvcServer;
let aheadMs = 0;

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(deployed.stack.baseUrl, token, method, path, body);

async function newRepo(name: string): Promise<void> {
  const created = await fetch(`${deployed.stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${token}` },
    body: JSON.stringify({ name }),
  });
  expect(created.status).toBe(201);
}

/** Polls the import until `done` holds; an error, or the time running out, fails with the workers' logs. */
async function until(repo: string, done: (body: Record<string, unknown>) => boolean, timeoutMs = 150_000) {
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    last = (await api('GET', `/repos/octocat/${repo}/import`)).body;
    if (done(last)) return last;
    if (last.status === 'error' || last.status?.toString().endsWith('_failed')) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`import of ${repo} ended ${JSON.stringify(last)}\n${await deployed.logs()}`);
}

/** Polls the sync resource until `done` holds, failing with the functions' logs. */
// biome-ignore lint/suspicious/noExplicitAny: bodies are asserted field by field
async function syncUntil(repo: string, done: (sync: any) => boolean): Promise<any> {
  const deadline = Date.now() + 60_000;
  let last: unknown = {};
  while (Date.now() < deadline) {
    last = (await api('GET', `/repos/octocat/${repo}/import/sync`)).body;
    if (done(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`sync of ${repo} is ${JSON.stringify(last)}\n${await deployed.logs()}`);
}

/** Whether the local Step Functions ran an execution of this name (`owner.repo.sync-N`). */
async function executionExists(name: string): Promise<boolean> {
  const sfn = new SFNClient({
    endpoint: deployed.stack.stepFunctionsEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
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

async function importAndClone(repo: string, request: Record<string, unknown>): Promise<string> {
  await newRepo(repo);
  expect((await api('PUT', `/repos/octocat/${repo}/import`, request)).status).toBe(201);
  await until(repo, (body) => body.status === 'complete');
  const dir = await mkdtemp(join(work, `${repo}-`));
  const cloned = await git(['clone', '-q', `${withUser(deployed.stack.webUrl)}/octocat/${repo}.git`, dir], {
    password: PASSWORD,
  });
  expect(cloned.code, cloned.stderr).toBe(0);
  return dir;
}

beforeAll(async () => {
  deployed = await startAsDeployed({
    overrides: { LARGE_FILE_BYTES: String(LARGE_FILE_BYTES) },
    syncScheduler: { tickMs: 1000, clock: () => Date.now() + aheadMs },
  });
  git = await gitClient();
  work = await mkdtemp(join(tmpdir(), 'deployed-imports-'));
  await Promise.all([
    makeFixtureRepository(join(work, 'origins', 'project.git'), {
      commits: 6,
      branches: 1,
      annotatedTags: 1,
      largeFile: { path: 'assets/big.bin', bytes: LARGE_FILE_BYTES + 1 },
    }),
    makeHgFixture(join(work, 'hg')),
    makeSvnRepository(join(work, 'svn')),
  ]);
  const [alpha] = tfvcHistory();
  if (!alpha) throw new Error('the TFVC fixture has no project');
  [gitOrigin, hgOrigin, svnOrigin, tfvcOrigin] = await Promise.all([
    serveGitHttp(join(work, 'origins')),
    serveHg({ repo: join(work, 'hg') }),
    serveSvn(join(work, 'svn')),
    serveTfvc({ projects: [alpha] }),
  ]);
  const user = await createUser(deployed.stack.endpointsFile, 'octocat', PASSWORD);
  token = (
    await personalToken(deployed.stack.baseUrl, user.auth, ['repo']).catch(async (error: unknown) => {
      throw new Error(`${error}\n${await deployed.logs()}`);
    })
  ).token;
}, 600_000);

afterAll(async () => {
  await Promise.all([gitOrigin?.close(), hgOrigin?.close(), svnOrigin?.close(), tfvcOrigin?.close()]);
  await deployed?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the worker image under AWS identities', () => {
  it('imports a Git origin with a large file through the LFS choice', async () => {
    await newRepo('from-git');
    expect(
      (await api('PUT', '/repos/octocat/from-git/import', { vcs_url: `${gitOrigin.url}/project.git` }))
        .status,
    ).toBe(201);
    const waiting = await until(
      'from-git',
      (body) => body.has_large_files === true && body.import_percent === 100,
    );
    expect(waiting).toMatchObject({ use_lfs: 'undecided', large_files_count: 1 });
    expect((await api('PATCH', '/repos/octocat/from-git/import/lfs', { use_lfs: 'opt_in' })).status).toBe(
      200,
    );
    await until('from-git', (body) => body.status === 'complete');

    const dir = await mkdtemp(join(work, 'from-git-'));
    const cloned = await git(['clone', '-q', `${deployed.stack.webUrl}/octocat/from-git.git`, dir], {
      password: PASSWORD,
    });
    expect(cloned.code, cloned.stderr).toBe(0);
    // The large file lives in one commit of the history: checking it out fetches it through LFS.
    const added = await git(['log', '--all', '--diff-filter=A', '--format=%H', '--', 'assets/big.bin'], {
      cwd: dir,
    });
    const checkout = await git(['checkout', '-q', added.stdout.trim()], { cwd: dir, password: PASSWORD });
    expect(checkout.code, checkout.stderr).toBe(0);
    expect((await stat(join(dir, 'assets/big.bin'))).size).toBe(LARGE_FILE_BYTES + 1);

    // What the workers wrote is the access point's user's, as EFS stores it; they ran as Lambda's.
    const hosted = join(deployed.fileSystem, 'repositories', 'octocat', 'from-git.git');
    expect((await stat(hosted)).uid).toBe(deployed.accessPointUser.uid);
    expect(LAMBDA_USER.uid).not.toBe(deployed.accessPointUser.uid);
  }, 300_000);

  it('follows a Git origin: a sync moves the attempt directory on and publishes what is new', async () => {
    const origin = join(work, 'origins', 'followed.git');
    await makeFixtureRepository(origin, { commits: 5, branches: 1, annotatedTags: 1 });
    await importAndClone('followed', { vcs_url: `${gitOrigin.url}/followed.git` });
    expect((await api('PUT', '/repos/octocat/followed/import/sync', { interval_minutes: null })).status).toBe(
      200,
    );

    const change = await mkdtemp(join(work, 'followed-change-'));
    expect((await git(['clone', '-q', origin, change])).code).toBe(0);
    await writeFile(join(change, 'after-follow.txt'), 'new at the origin\n');
    for (const args of [
      ['add', 'after-follow.txt'],
      ['commit', '-q', '-m', 'New at the origin'],
      ['push', '-q'],
    ])
      expect((await git(args, { cwd: change })).code).toBe(0);

    expect((await api('POST', '/repos/octocat/followed/import/sync')).status).toBe(202);
    await until('followed', (body) => body.status === 'complete');
    const sync = (await api('GET', '/repos/octocat/followed/import/sync')).body;
    expect(sync).toMatchObject({ state: 'following', last_sync: { status: 'succeeded', new_commits: 1 } });
    const hosted = `${withUser(deployed.stack.webUrl)}/octocat/followed.git`;
    expect(await remoteRefs(git, hosted, PASSWORD)).toEqual(await remoteRefs(git, origin));
    // The second attempt holds the first's raw history; the first's directory is gone.
    const attempts = await readdir(join(deployed.fileSystem, 'imports', 'octocat', 'followed'));
    expect(attempts).toEqual(['2']);
  }, 300_000);

  it('runs the shipped scheduler: a due sync starts on its own, a due one with nothing new starts none', async () => {
    const origin = join(work, 'origins', 'scheduled.git');
    await makeFixtureRepository(origin, { commits: 4, branches: 1, annotatedTags: 1 });
    await importAndClone('scheduled', { vcs_url: `${gitOrigin.url}/scheduled.git` });
    expect((await api('PUT', '/repos/octocat/scheduled/import/sync', { interval_minutes: 5 })).status).toBe(
      200,
    );
    const change = await mkdtemp(join(work, 'scheduled-change-'));
    expect((await git(['clone', '-q', origin, change])).code).toBe(0);
    await writeFile(join(change, 'scheduled.txt'), 'new at the origin\n');
    for (const args of [
      ['add', 'scheduled.txt'],
      ['commit', '-q', '-m', 'New at the origin'],
      ['push', '-q'],
    ])
      expect((await git(args, { cwd: change })).code).toBe(0);

    // No POST: the scheduler's next tick finds the sync due and starts it.
    aheadMs = 6 * MINUTE;
    const synced = await syncUntil('scheduled', (sync) => sync.last_sync?.status === 'succeeded');
    await until('scheduled', (body) => body.status === 'complete');
    expect(synced).toMatchObject({ state: 'following', last_sync: { new_commits: 1 } });
    expect(await executionExists('octocat.scheduled.sync-2')).toBe(true);
    const hosted = `${withUser(deployed.stack.webUrl)}/octocat/scheduled.git`;
    expect(await remoteRefs(git, hosted, PASSWORD)).toEqual(await remoteRefs(git, origin));

    // Due again with nothing new: the check is recorded, no execution starts.
    aheadMs = 12 * MINUTE;
    const checked = await syncUntil(
      'scheduled',
      (sync) => Date.parse(sync.last_checked_at) > Date.parse(synced.last_checked_at),
    );
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await executionExists('octocat.scheduled.sync-3')).toBe(false);
    expect((await api('GET', '/repos/octocat/scheduled/import')).body.status).toBe('complete');
    expect(checked).toMatchObject({ last_synced_at: synced.last_synced_at, last_sync: synced.last_sync });
    expect(Date.parse(checked.next_sync_at)).toBe(Date.parse(checked.last_checked_at) + 5 * MINUTE);
    // Both ticks were the deployed function's, in the image under Lambda's user.
    expect(await deployed.logs()).toMatch(
      /--- OAuthImportService-SyncSchedulerFunction-\d+\.log\n[\s\S]*"unchanged":1/,
    );
  }, 300_000);

  it('imports a Mercurial origin', async () => {
    const dir = await importAndClone('from-hg', { vcs_url: hgOrigin.url });
    expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe('one\nthree\n');
  }, 300_000);

  it('follows a Mercurial origin: the kept clone and marks continue under Lambda identities', async () => {
    await importAndClone('followed-hg', { vcs_url: hgOrigin.url });
    expect(
      (await api('PUT', '/repos/octocat/followed-hg/import/sync', { interval_minutes: null })).status,
    ).toBe(200);
    const repo = join(work, 'hg');
    await writeFile(join(repo, 'c.txt'), 'new at the origin\n');
    for (const args of [
      ['add', 'c.txt'],
      ['commit', '-m', 'New at the origin', '-u', 'Ada <ada@example.org>'],
    ]) {
      const done = spawnSync('hg', ['--cwd', repo, ...args], { env: { ...process.env, HGRCPATH: '' } });
      expect(done.status, done.stderr.toString()).toBe(0);
    }

    expect((await api('POST', '/repos/octocat/followed-hg/import/sync')).status).toBe(202);
    await until('followed-hg', (body) => body.status === 'complete');
    const sync = (await api('GET', '/repos/octocat/followed-hg/import/sync')).body;
    expect(sync).toMatchObject({ last_sync: { status: 'succeeded', new_commits: 1 } });
    const dir = await mkdtemp(join(work, 'followed-hg-'));
    const cloned = await git(
      ['clone', '-q', `${withUser(deployed.stack.webUrl)}/octocat/followed-hg.git`, dir],
      {
        password: PASSWORD,
      },
    );
    expect(cloned.code, cloned.stderr).toBe(0);
    expect(await readFile(join(dir, 'c.txt'), 'utf8')).toBe('new at the origin\n');
  }, 300_000);

  it('imports a Subversion origin', async () => {
    const dir = await importAndClone('from-svn', { vcs_url: svnOrigin.url('repo') });
    expect((await readdir(dir)).filter((name) => name !== '.git').length).toBeGreaterThan(0);
  }, 300_000);

  it('follows a Subversion origin: the kept mirror and marks continue under Lambda identities', async () => {
    await importAndClone('followed-svn', { vcs_url: svnOrigin.url('repo') });
    expect(
      (await api('PUT', '/repos/octocat/followed-svn/import/sync', { interval_minutes: null })).status,
    ).toBe(200);
    const file = join(work, 'after-follow.txt');
    await writeFile(file, 'new at the origin\n');
    const origin = `file://${join(work, 'svn', 'repo')}`;
    const put = spawnSync('svnmucc', [
      '--username',
      'ada',
      '-m',
      'New at the origin',
      'put',
      file,
      `${origin}/trunk/after-follow.txt`,
    ]);
    expect(put.status, put.stderr.toString()).toBe(0);
    const youngest = spawnSync('svnlook', ['youngest', join(work, 'svn', 'repo')])
      .stdout.toString()
      .trim();

    expect((await api('POST', '/repos/octocat/followed-svn/import/sync')).status).toBe(202);
    await until('followed-svn', (body) => body.status === 'complete');
    const sync = (await api('GET', '/repos/octocat/followed-svn/import/sync')).body;
    expect(sync).toMatchObject({
      last_sync: { status: 'succeeded', new_commits: 1 },
      origin_revision: youngest,
    });
    const dir = await mkdtemp(join(work, 'followed-svn-'));
    const cloned = await git(
      ['clone', '-q', `${withUser(deployed.stack.webUrl)}/octocat/followed-svn.git`, dir],
      {
        password: PASSWORD,
      },
    );
    expect(cloned.code, cloned.stderr).toBe(0);
    expect(await readFile(join(dir, 'after-follow.txt'), 'utf8')).toBe('new at the origin\n');
  }, 300_000);

  it('imports a TFVC origin', async () => {
    const dir = await importAndClone('from-tfvc', {
      vcs_url: tfvcOrigin.collectionUrl,
      vcs: 'tfvc',
      tfvc_project: 'Alpha',
    });
    expect((await readdir(dir)).filter((name) => name !== '.git').length).toBeGreaterThan(0);
  }, 300_000);

  it('takes a push through the front end, which a new clone then shows', async () => {
    const dir = await importAndClone('pushed', { vcs_url: hgOrigin.url });
    await writeFile(join(dir, 'after-import.txt'), 'pushed through the front end\n');
    expect((await git(['add', 'after-import.txt'], { cwd: dir })).code).toBe(0);
    expect((await git(['commit', '-q', '-m', 'After the import'], { cwd: dir })).code).toBe(0);
    const pushed = await git(['push', '-q', 'origin', 'HEAD'], { cwd: dir, password: PASSWORD });
    expect(pushed.code, pushed.stderr).toBe(0);

    const again = await mkdtemp(join(work, 'pushed-again-'));
    const cloned = await git(['clone', '-q', `${deployed.stack.webUrl}/octocat/pushed.git`, again], {
      password: PASSWORD,
    });
    expect(cloned.code, cloned.stderr).toBe(0);
    expect(await readFile(join(again, 'after-import.txt'), 'utf8')).toBe('pushed through the front end\n');
  }, 300_000);

  it('leaves no process behind in the front end when a client abandons a clone', async () => {
    // 64 MiB in 4 MiB files git compresses while serving: a clone spends seconds in pack-objects.
    const bulky = join(work, 'bulky.git');
    expect((await git(['init', '-q', '--bare', bulky])).code).toBe(0);
    await writeLargeCommit(bulky, 64 * 1024 * 1024, work, { partBytes: 4 * 1024 * 1024, slowToServe: true });
    await newRepo('bulky');
    const pushed = await git(
      ['push', '-q', `${withPassword(deployed.stack.webUrl)}/octocat/bulky.git`, 'main'],
      {
        cwd: bulky,
      },
    );
    expect(pushed.code, pushed.stderr).toBe(0);

    const frontEnd = deployed.frontEnd.sandbox.process.pid as number;
    const before = await descendants(frontEnd);
    const target = await mkdtemp(join(work, 'abandoned-'));
    const client: ChildProcess = spawn(
      'git',
      ['clone', '-q', `${withPassword(deployed.stack.webUrl)}/octocat/bulky.git`, target],
      { env: { PATH: process.env.PATH, HOME: work, GIT_CONFIG_NOSYSTEM: '1' }, stdio: 'ignore' },
    );
    // The client goes away while the front end's git packs what it asked for.
    let packing = false;
    for (
      const deadline = Date.now() + 60_000;
      !packing && Date.now() < deadline && client.exitCode === null;
    ) {
      for (const entry of await descendants(frontEnd)) {
        if ((await commandLine(entry.pid)).includes('pack-objects')) packing = true;
      }
      if (!packing) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    client.kill('SIGKILL');
    expect(packing, 'git pack-objects never ran under the front end').toBe(true);

    const deadline = Date.now() + 10_000;
    let left = await descendants(frontEnd);
    while (left.length > before.length && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      left = await descendants(frontEnd);
    }
    // Which processes, and whether any is a zombie: a live one may be running or asleep when read.
    const shown = (entry: { comm: string; state: string }) =>
      entry.state === 'Z' ? `${entry.comm} Z` : entry.comm;
    expect(left.map(shown)).toEqual(before.map(shown));
  }, 300_000);
});

/** The web origin as octocat (git asks the password of `gitClient`'s askpass). */
function withUser(url: string): string {
  const parsed = new URL(url);
  parsed.username = 'octocat';
  return parsed.toString().replace(/\/$/, '');
}

/** The web origin with octocat's credentials in it, for a client started by hand. */
function withPassword(url: string): string {
  const parsed = new URL(withUser(url));
  parsed.password = PASSWORD;
  return parsed.toString().replace(/\/$/, '');
}

/** The processes under the front end's sandbox (its init, node, and whatever they started), by PID. */
async function descendants(pid: number) {
  return descendantsOf(await processTable(), pid).sort((a, b) => a.pid - b.pid);
}

describe('the shipped scheduler and a silent origin', () => {
  it('records a silent origin’s check and failed sync well within the function’s time, and starts nothing', async () => {
    // The origin: at first the Git origin through a relay; then a listener that accepts and never answers.
    let silent = false;
    const held: Socket[] = [];
    const relay = createServer((client) => {
      held.push(client);
      client.on('error', () => {});
      if (silent) return;
      const upstream = connect(gitOrigin.port, '127.0.0.1');
      upstream.on('error', () => client.destroy());
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const port = (relay.address() as AddressInfo).port;
    try {
      await makeFixtureRepository(join(work, 'origins', 'silent.git'), {
        commits: 2,
        branches: 1,
        annotatedTags: 0,
      });
      await importAndClone('silent', { vcs_url: `http://127.0.0.1:${port}/silent.git` });
      const following = await api('PUT', '/repos/octocat/silent/import/sync', { interval_minutes: 5 });
      expect(following.status).toBe(200);
      silent = true;
      const asked = Date.now();

      aheadMs = 60 * MINUTE;
      const checked = await syncUntil('silent', (sync) => sync.last_sync?.status === 'failed');

      expect(Date.now() - asked).toBeLessThan(SYNC_SCHEDULER_TIMEOUT_SECONDS * 1000);
      expect(checked.last_sync.error_message).toBe(
        `The origin did not answer the check within ${ORIGIN_CHECK_TIMEOUT_MS / 1000} seconds; it is checked again at the next sync time`,
      );
      expect(checked.last_checked_at).not.toBeNull();
      expect(Date.parse(checked.next_sync_at)).toBe(Date.parse(checked.last_checked_at) + 5 * MINUTE);
      expect(await executionExists('octocat.silent.sync-2')).toBe(false);
      expect((await api('GET', '/repos/octocat/silent/import')).body.status).toBe('complete');
    } finally {
      aheadMs = 0;
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => relay.close(resolve));
    }
  }, 300_000);
});
