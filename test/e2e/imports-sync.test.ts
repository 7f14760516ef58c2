import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DescribeExecutionCommand, SFNClient } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getImport } from '#data/imports/items';
import { enterStatus } from '#data/imports/progress';
import { createUser, personalToken } from '#test/fixtures';
import { startTestStack } from '#test/stack';

/**
 * Following an import's origin until cut-over (issue 27) over HTTP against the local stack, with
 * the idle workflow fixture: no worker runs, so an import is made `complete` through the
 * worker-side data function; pushes go through the real git client.
 */

const run = promisify(execFile);
type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let owner: string; // octocat's `repo` token
let other: string; // hubot's `repo` token
let work: string;
let askpass: string;
let sfn: SFNClient;

const executionStatus = async (executionArn: string | undefined) =>
  (await sfn.send(new DescribeExecutionCommand({ executionArn }))).status;

const IDLE = fileURLToPath(new URL('../fixtures/import-idle.asl.json', import.meta.url));
const PREVIEW = 'application/vnd.github.barred-rock-preview';
const ORIGIN = 'http://127.0.0.1:9/origin.git';

async function api(
  method: string,
  path: string,
  { auth = owner, body }: { auth?: string; body?: unknown } = {},
) {
  const response = await fetch(`${stack.baseUrl}${path}`, {
    method,
    headers: { Authorization: `token ${auth}`, Accept: PREVIEW },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

let repoCount = 0;
/** A repository with an import started (the idle workflow leaves it `importing`). */
async function imported(): Promise<string> {
  const repo = `followed-${++repoCount}`;
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${owner}` },
    body: JSON.stringify({ name: repo }),
  });
  expect(created.status).toBe(201);
  const started = await api('PUT', `/repos/octocat/${repo}/import`, {
    body: { vcs_url: ORIGIN, vcs: 'git' },
  });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  return repo;
}

/** What the worker writes when the import's last step has ended. */
async function complete(repo: string): Promise<void> {
  const record = await getImport('octocat', repo);
  if (!record) throw new Error('no import');
  expect(await enterStatus('octocat', repo, record.attempt, 'complete')).toMatchObject({
    status: 'complete',
  });
}

async function git(args: string[], cwd = work) {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: work,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: join(work, 'gitconfig'),
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: askpass,
    TEST_GIT_PASSWORD: owner,
  };
  try {
    const { stdout, stderr } = await run('git', args, { cwd, env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

/** A working copy with one commit whose `origin` is the hosted repository. */
async function workingCopy(repo: string): Promise<string> {
  const dir = await mkdtemp(join(work, `${repo}-`));
  await writeFile(join(dir, 'README.md'), `# ${repo}\n`);
  for (const args of [
    ['init', '-q', '-b', 'main'],
    ['add', '.'],
    ['-c', 'user.name=Owner', '-c', 'user.email=owner@example.com', 'commit', '-qm', 'first'],
    ['remote', 'add', 'origin', `${stack.webUrl}/octocat/${repo}.git`],
  ])
    expect((await git(args, dir)).code).toBe(0);
  return dir;
}

beforeAll(async () => {
  stack = await startTestStack({ importStateMachine: { name: 'Import', definitionFile: IDLE, tasks: {} } });
  sfn = new SFNClient({
    endpoint: stack.stepFunctionsEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const [octocat, hubot] = await Promise.all([
    createUser(stack.endpointsFile, 'octocat'),
    createUser(stack.endpointsFile, 'hubot'),
  ]);
  [owner, other] = await Promise.all([
    personalToken(stack.baseUrl, octocat.auth, ['repo']).then((t) => t.token),
    personalToken(stack.baseUrl, hubot.auth, ['repo']).then((t) => t.token),
  ]);
  work = await mkdtemp(join(tmpdir(), 'imports-sync-'));
  await writeFile(join(work, 'gitconfig'), '[init]\n\tdefaultBranch = main\n');
  askpass = join(work, 'askpass.sh');
  await writeFile(
    askpass,
    '#!/bin/sh\ncase "$1" in Username*) echo "octocat" ;; *) echo "$TEST_GIT_PASSWORD" ;; esac\n',
  );
  await chmod(askpass, 0o700);
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

describe('the sync resource', () => {
  it('is off until asked, follows once the import is complete, and is cut over by DELETE', async () => {
    const repo = await imported();
    const url = `/repos/octocat/${repo}/import/sync`;

    const off = await api('GET', url);
    expect(off.status).toBe(200);
    expect(off.body).toEqual({
      url: `${stack.baseUrl}${url}`,
      import_url: `${stack.baseUrl}/repos/octocat/${repo}/import`,
      state: 'off',
      interval_minutes: null,
      following_since: null,
      last_synced_at: null,
      last_checked_at: null,
      next_sync_at: null,
      origin_revision: null,
      last_sync: null,
      cut_over_at: null,
      keep_refs_deleted_while_following: false,
      keep_deleted_refs: false,
    });

    const early = await api('PUT', url, { body: { interval_minutes: 60 } });
    expect(early.status).toBe(422);
    expect(early.body).toMatchObject({
      message: 'Validation Failed',
      errors: [{ resource: 'ImportSync', field: 'status', code: 'custom' }],
    });
    expect(early.body.errors[0].message).toContain('complete');
    expect((await api('DELETE', url)).status).toBe(422);

    await complete(repo);
    const following = await api('PUT', url, { body: { interval_minutes: 60 } });
    expect(following.status, JSON.stringify(following.body)).toBe(200);
    expect(following.body).toMatchObject({ state: 'following', interval_minutes: 60, last_sync: null });
    const since = Date.parse(following.body.following_since);
    expect(Date.parse(following.body.next_sync_at) - since).toBe(60 * 60_000);

    const onDemand = await api('PUT', url, { body: { interval_minutes: null } });
    expect(onDemand.status).toBe(200);
    expect(onDemand.body).toMatchObject({ state: 'following', interval_minutes: null, next_sync_at: null });
    expect(onDemand.body.following_since).toBe(following.body.following_since);
    expect((await api('GET', url)).body).toEqual(onDemand.body);

    const cut = await api('DELETE', url);
    expect(cut.status).toBe(200);
    expect(cut.body).toMatchObject({ state: 'cut_over', next_sync_at: null });
    expect(typeof cut.body.cut_over_at).toBe('string');
    expect((await api('DELETE', url)).body).toEqual(cut.body);
    expect((await api('GET', url)).body).toEqual(cut.body);

    const again = await api('PUT', url, { body: { interval_minutes: 60 } });
    expect(again.status).toBe(422);
    expect(again.body.errors).toMatchObject([{ resource: 'ImportSync', field: 'state', code: 'custom' }]);
  });

  it('checks interval_minutes: a whole number of at least 5, or null, and present', async () => {
    const repo = await imported();
    await complete(repo);
    const url = `/repos/octocat/${repo}/import/sync`;
    for (const interval of [4, 0, -5, 5.5, '60', true, 525_601]) {
      const refused = await api('PUT', url, { body: { interval_minutes: interval } });
      expect(refused.status, String(interval)).toBe(422);
      expect(refused.body.errors).toMatchObject([{ resource: 'ImportSync', field: 'interval_minutes' }]);
    }
    const missing = await api('PUT', url, { body: {} });
    expect(missing.status).toBe(422);
    expect(missing.body.errors).toEqual([
      { resource: 'ImportSync', field: 'interval_minutes', code: 'missing_field' },
    ]);
    expect((await api('PUT', url, { body: 'nope' })).status).toBe(400);
    expect((await api('GET', url)).body.state).toBe('off');
    expect((await api('PUT', url, { body: { interval_minutes: 5 } })).body.interval_minutes).toBe(5);
  });

  it('is the owner’s alone, and 404 without an import', async () => {
    const repo = await imported();
    await complete(repo);
    const url = `/repos/octocat/${repo}/import/sync`;
    expect((await api('GET', url, { auth: other })).status).toBe(404);
    expect((await api('PUT', url, { auth: other, body: { interval_minutes: null } })).status).toBe(404);
    expect((await api('DELETE', url, { auth: other })).status).toBe(404);
    expect((await api('GET', '/repos/octocat/nothing-here/import/sync')).status).toBe(404);
    expect((await api('DELETE', `/repos/octocat/${repo}/import`)).status).toBe(204);
    expect((await api('GET', url)).status).toBe(404);
  });
});

describe('sync now', () => {
  it('starts one execution of the import workflow named owner.repo.sync-N; 409 while it runs, 422 unless following', async () => {
    const repo = await imported();
    const url = `/repos/octocat/${repo}/import/sync`;
    expect((await api('POST', url)).status).toBe(422);
    await complete(repo);
    const notFollowing = await api('POST', url);
    expect(notFollowing.status).toBe(422);
    expect(notFollowing.body.errors).toMatchObject([
      { resource: 'ImportSync', field: 'state', code: 'custom' },
    ]);
    expect((await api('PUT', url, { body: { interval_minutes: null } })).status).toBe(200);

    const started = await api('POST', url);
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    expect(started.body).toMatchObject({ status: 'importing', vcs: 'git', vcs_url: ORIGIN });
    const record = await getImport('octocat', repo);
    expect(record?.attempt).toBe(2);
    expect(record?.executionArn).toMatch(new RegExp(`:execution:[^:]+:octocat\\.${repo}\\.sync-2$`));
    expect(await executionStatus(record?.executionArn)).toBe('RUNNING');

    const busy = await api('POST', url);
    expect(busy.status).toBe(409);
    expect(busy.body.message).toMatch(/under way/);
    // The interval changes while the sync runs.
    const changed = await api('PUT', url, { body: { interval_minutes: 15 } });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body).toMatchObject({ state: 'following', interval_minutes: 15 });

    await complete(repo);
    const again = await api('POST', url);
    expect(again.status).toBe(202);
    expect((await getImport('octocat', repo))?.executionArn).toMatch(/\.sync-3$/);
    await complete(repo);

    expect((await api('DELETE', url)).status).toBe(200);
    expect((await api('POST', url)).status).toBe(422);
    expect((await api('POST', url, { auth: other })).status).toBe(404);
  });
});

describe('pushes while following', () => {
  it('are refused with git’s own text naming the cut-over, and accepted after it', async () => {
    const repo = await imported();
    await complete(repo);
    const dir = await workingCopy(repo);
    expect(
      (await api('PUT', `/repos/octocat/${repo}/import/sync`, { body: { interval_minutes: null } })).status,
    ).toBe(200);

    const refused = await git(['push', 'origin', 'main'], dir);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      `remote: This repository follows its import origin until cut-over, so it is read-only. To push, cut over first: DELETE /repos/octocat/${repo}/import/sync.`,
    );
    expect(refused.stderr).toContain('403');
    // Reading is unaffected.
    expect((await git(['ls-remote', 'origin'], dir)).code).toBe(0);

    expect((await api('DELETE', `/repos/octocat/${repo}/import/sync`)).status).toBe(200);
    const pushed = await git(['push', 'origin', 'main'], dir);
    expect(pushed.code, pushed.stderr).toBe(0);
    const remote = await git(['ls-remote', 'origin', 'main'], dir);
    const local = await git(['rev-parse', 'main'], dir);
    expect(remote.stdout.split('\t')[0]).toBe(local.stdout.trim());
  });
});

describe('LFS uploads while following', () => {
  it('refuse an upload action obtained before following: nothing is stored until the cut-over', async () => {
    const repo = await imported();
    await complete(repo);
    const content = Buffer.from(`object of ${repo}\n`);
    const oid = createHash('sha256').update(content).digest('hex');
    const objects = `${stack.webUrl}/octocat/${repo}.git/info/lfs/objects`;
    const batch = await fetch(`${objects}/batch`, {
      method: 'POST',
      headers: {
        Authorization: `token ${owner}`,
        Accept: 'application/vnd.git-lfs+json',
        'Content-Type': 'application/vnd.git-lfs+json',
      },
      body: JSON.stringify({ operation: 'upload', objects: [{ oid, size: content.length }] }),
    });
    expect(batch.status).toBe(200);
    const answer = (await batch.json()) as {
      objects: { actions: { upload: { href: string; header: Record<string, string> } } }[];
    };
    const action = answer.objects[0]?.actions.upload ?? { href: '', header: {} };
    expect(action.header.Authorization).toMatch(/^RemoteAuth /);
    const url = `/repos/octocat/${repo}/import/sync`;
    expect((await api('PUT', url, { body: { interval_minutes: null } })).status).toBe(200);
    const put = () =>
      fetch(action.href, {
        method: 'PUT',
        headers: { 'Content-Type': 'application/octet-stream', ...action.header },
        body: content,
      });

    const refused = await put();

    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { message: string }).message).toContain(
      `DELETE /repos/octocat/${repo}/import/sync`,
    );
    const read = await fetch(`${objects}/${oid}`, { headers: { Authorization: `token ${owner}` } });
    expect(read.status).toBe(404);
    // After the cut-over the same token writes, as any upload would.
    expect((await api('DELETE', url)).status).toBe(200);
    expect((await put()).status).toBe(200);
  });
});
