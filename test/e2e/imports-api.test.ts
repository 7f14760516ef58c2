import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { DescribeExecutionCommand, SFNClient } from '@aws-sdk/client-sfn';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db, tableName } from '#data/client';
import { getImport, getSealedCredentials, listAuthors } from '#data/imports/items';
import {
  addAuthors,
  enterStatus,
  recordProgress,
  setLargeFiles,
  waitForPerson,
} from '#data/imports/progress';
import { markOwnerPushed, storeCredentials } from '#data/imports/requests';
import { repoKey } from '#data/keys';
import { MAX_VCS_PASSWORD_LENGTH } from '#domain/imports';
import { rawJobOf } from '#services/import-worker';
import { openImportCredentials } from '#services/imports';
import { config } from '#shared/config';
import { createUser, personalToken } from '#test/fixtures';
import { startTestStack } from '#test/stack';
import { hostedRepositoryPath, importWorkRoot } from '#vcs/hosted-paths';

/**
 * The source import API over HTTP against the local stack, with an idle workflow fixture (its
 * executions stay RUNNING until stopped): no worker runs, so the tests put the worker's findings
 * (statuses, authors, large files) in place through the worker-side data functions.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let sfn: SFNClient;
let owner: string; // octocat's `repo` token
let publicOnly: string; // octocat's `public_repo` token
let other: string; // hubot's `repo` token

const IDLE = fileURLToPath(new URL('../fixtures/import-idle.asl.json', import.meta.url));
const PREVIEW = 'application/vnd.github.barred-rock-preview';
/** An origin on the loopback interface (allowed locally); the idle workflow never connects to it. */
const ORIGIN = 'http://127.0.0.1:9/origin.git';

interface Sent {
  readonly auth?: string;
  readonly body?: unknown;
  readonly accept?: string | null;
}

async function api(method: string, path: string, { auth = owner, body, accept = PREVIEW }: Sent = {}) {
  const headers: Record<string, string> = { Authorization: `token ${auth}` };
  if (auth === '') delete headers.Authorization;
  if (accept !== null) headers.Accept = accept;
  const response = await fetch(`${stack.baseUrl}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text === '' ? undefined : JSON.parse(text),
  };
}

let repoCount = 0;
async function newRepo(options: { private?: boolean } = {}): Promise<string> {
  const name = `target-${++repoCount}`;
  const response = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${owner}` },
    body: JSON.stringify({ name, private: options.private ?? false }),
  });
  expect(response.status).toBe(201);
  return name;
}

async function started(body: Record<string, unknown> = { vcs_url: ORIGIN, vcs: 'git' }) {
  const repo = await newRepo();
  const response = await api('PUT', `/repos/octocat/${repo}/import`, { body });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  const record = await getImport('octocat', repo);
  if (!record) throw new Error('no import item');
  return { repo, record, response };
}

const executionStatus = async (executionArn: string | undefined) =>
  (await sfn.send(new DescribeExecutionCommand({ executionArn }))).status;

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
  [owner, publicOnly, other] = await Promise.all([
    personalToken(stack.baseUrl, octocat.auth, ['repo']).then((t) => t.token),
    personalToken(stack.baseUrl, octocat.auth, ['public_repo']).then((t) => t.token),
    personalToken(stack.baseUrl, hubot.auth, ['repo']).then((t) => t.token),
  ]);
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

describe('preview media type', () => {
  it('answers 415 naming the media type without it, and accepts it with or without +json', async () => {
    const repo = await newRepo();
    for (const accept of [null, 'application/vnd.github.v3+json', 'application/vnd.github.barred-rock']) {
      const refused = await api('GET', `/repos/octocat/${repo}/import`, { accept });
      expect(refused.status).toBe(415);
      expect(refused.body.message).toContain(PREVIEW);
      expect(refused.body.message).toMatch(/^If you would like to help us test the Source Import API/);
    }
    for (const accept of [PREVIEW, `${PREVIEW}+json`, `application/json, ${PREVIEW}+json; q=0.9`]) {
      const seen = await api('GET', `/repos/octocat/${repo}/import`, { accept });
      expect(seen.status, accept).toBe(404);
      expect(seen.headers.get('x-github-media-type')).toBe('github.barred-rock-preview');
    }
  });
});

describe('access', () => {
  it('is 401 anonymously and 404 for anyone but the owner, and for a public_repo token on a private repository', async () => {
    const { repo } = await started();
    expect((await api('GET', `/repos/octocat/${repo}/import`, { auth: '' })).status).toBe(401);
    for (const [method, path, body] of [
      ['GET', `/repos/octocat/${repo}/import`, undefined],
      ['PUT', `/repos/octocat/${repo}/import`, { vcs_url: ORIGIN }],
      ['PATCH', `/repos/octocat/${repo}/import`, {}],
      ['DELETE', `/repos/octocat/${repo}/import`, undefined],
      ['GET', `/repos/octocat/${repo}/import/authors`, undefined],
      ['PATCH', `/repos/octocat/${repo}/import/lfs`, { use_lfs: 'opt_in' }],
      ['GET', `/repos/octocat/${repo}/import/large_files`, undefined],
    ] as const) {
      expect((await api(method, path, { auth: other, body })).status, `${method} ${path}`).toBe(404);
    }
    const secret = await newRepo({ private: true });
    expect(
      (await api('PUT', `/repos/octocat/${secret}/import`, { auth: publicOnly, body: { vcs_url: ORIGIN } }))
        .status,
    ).toBe(404);
    expect((await api('PUT', `/repos/octocat/${secret}/import`, { body: { vcs_url: ORIGIN } })).status).toBe(
      201,
    );
    expect(
      (await api('PUT', '/repos/octocat/no-such-repo/import', { body: { vcs_url: ORIGIN } })).status,
    ).toBe(404);
  });
});

describe('start', () => {
  it('answers 201 with Location and the Import JSON, echoes svn as subversion, and starts the execution', async () => {
    const { repo, record, response } = await started({ vcs_url: ORIGIN, vcs: 'svn', unknown_field: [1] });
    const url = `${stack.baseUrl}/repos/octocat/${repo}/import`;
    expect(response.headers.get('location')).toBe(url);
    expect(response.body).toEqual({
      vcs: 'subversion',
      use_lfs: 'undecided',
      vcs_url: ORIGIN,
      status: 'importing',
      status_text: 'Importing...',
      import_percent: null,
      percent: null,
      commit_count: null,
      has_large_files: false,
      large_files_size: 0,
      large_files_count: 0,
      authors_count: 0,
      url,
      html_url: `${stack.webUrl}/octocat/${repo}/import`,
      authors_url: `${url}/authors`,
      repository_url: `${stack.baseUrl}/repos/octocat/${repo}`,
    });
    expect(Object.keys(response.body)).toEqual([
      'vcs',
      'use_lfs',
      'vcs_url',
      'status',
      'status_text',
      'import_percent',
      'percent',
      'commit_count',
      'has_large_files',
      'large_files_size',
      'large_files_count',
      'authors_count',
      'url',
      'html_url',
      'authors_url',
      'repository_url',
    ]);
    expect(await executionStatus(record.executionArn)).toBe('RUNNING');
    expect(record.executionArn).toMatch(new RegExp(`:execution:Import:octocat\\.${repo}\\.attempt-1$`));
  });

  it('without vcs starts at detecting with vcs null; credentials are stored sealed and never shown', async () => {
    const { repo, response } = await started({
      vcs_url: ORIGIN,
      vcs_username: 'me',
      vcs_password: 'hunter2-secret',
    });
    expect(response.body).toMatchObject({ vcs: null, status: 'detecting' });
    expect(response.body).not.toHaveProperty('commit_count');
    expect(JSON.stringify(response.body)).not.toContain('hunter2');
    const sealed = await getSealedCredentials('octocat', repo);
    expect(sealed?.sealed).toMatch(/^sealed:v1:/);
    expect(sealed?.sealed).not.toContain('hunter2');
    expect(await openImportCredentials('octocat', repo)).toEqual({
      username: 'me',
      password: 'hunter2-secret',
    });
    const read = await api('GET', `/repos/octocat/${repo}/import`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(response.body);
  });

  const refused: readonly (readonly [Record<string, unknown>, string, string])[] = [
    [{}, 'vcs_url', 'missing_field'],
    [{ vcs_url: 123 }, 'vcs_url', 'invalid'],
    [{ vcs_url: ORIGIN, vcs: 'cvs' }, 'vcs', 'invalid'],
    [{ vcs_url: ORIGIN, vcs: 7 }, 'vcs', 'invalid'],
    [{ vcs_url: ORIGIN, vcs_username: 'me' }, 'vcs_password', 'missing_field'],
    [{ vcs_url: ORIGIN, vcs_password: 'pw' }, 'vcs_username', 'missing_field'],
    [
      { vcs_url: ORIGIN, vcs_password: 'p'.repeat(MAX_VCS_PASSWORD_LENGTH + 1), vcs_username: 'me' },
      'vcs_password',
      'invalid',
    ],
    [{ vcs_url: 'ext::sh -c touch% /tmp/pwned' }, 'vcs_url', 'invalid'],
    [{ vcs_url: 'file:///etc/passwd' }, 'vcs_url', 'invalid'],
    [{ vcs_url: '-uhttp://example.com/x' }, 'vcs_url', 'invalid'],
    [{ vcs_url: '--upload-pack=touch /tmp/x' }, 'vcs_url', 'invalid'],
    [{ vcs_url: 'https://user:pass@example.com/x.git' }, 'vcs_url', 'invalid'],
    [{ vcs_url: 'http://10.0.0.1/x.git' }, 'vcs_url', 'invalid'],
    [{ vcs_url: 'http://169.254.169.254/latest/meta-data/' }, 'vcs_url', 'invalid'],
    [{ vcs_url: 'http://[::ffff:127.0.0.2]/x.git' }, 'vcs_url', 'invalid'],
    [{ vcs_url: 'http://[fd00:ec2::254]/' }, 'vcs_url', 'invalid'],
    [{ vcs_url: 'http://192.168.1.1/x.git' }, 'vcs_url', 'invalid'],
    [{ vcs_url: 'git://localhost/x.git' }, 'vcs_url', 'invalid'],
    [{ vcs_url: 'svn://example.com/x', vcs: 'git' }, 'vcs_url', 'invalid'],
    [{ vcs_url: 'not a url' }, 'vcs_url', 'invalid'],
  ];
  it.each(
    refused.map(([body, field, code]) => [JSON.stringify(body).slice(0, 70), body, field, code] as const),
  )(
    'refuses %s with 422 on %s (literal forbidden addresses fail validation: no import, no execution)',
    async (_, body, field, code) => {
      const repo = await newRepo();
      const response = await api('PUT', `/repos/octocat/${repo}/import`, { body });
      expect(response.status, JSON.stringify(response.body)).toBe(422);
      expect(response.body.message).toBe('Validation Failed');
      expect(response.body.errors).toContainEqual(
        expect.objectContaining({ resource: 'Import', field, code }),
      );
      // A refused URL is named in words; a wrong type is only `invalid`.
      if (field === 'vcs_url' && typeof (body as { vcs_url?: unknown }).vcs_url === 'string')
        expect(response.body.errors[0].message).toMatch(/vcs_url/);
      expect(await getImport('octocat', repo)).toBeUndefined();
    },
  );

  it('answers 409 when the repository has an import or content', async () => {
    const { repo } = await started();
    const again = await api('PUT', `/repos/octocat/${repo}/import`, { body: { vcs_url: ORIGIN } });
    expect(again.status).toBe(409);
    expect(again.body.message).toMatch(/already exists/);

    const full = await newRepo();
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: repoKey('octocat', full),
        UpdateExpression: 'SET hasContent = :yes',
        ExpressionAttributeValues: { ':yes': true },
      }),
    );
    const refused = await api('PUT', `/repos/octocat/${full}/import`, { body: { vcs_url: ORIGIN } });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(/not empty/);
    expect(await getImport('octocat', full)).toBeUndefined();
  });
});

describe('progress and worker writes', () => {
  it('shows what the worker recorded; writes of a stale attempt are dropped', async () => {
    const { repo, record } = await started();
    expect(
      await recordProgress('octocat', repo, record.attempt, { percent: 40, commitCount: 1042 }),
    ).toMatchObject({ percent: 40, commitCount: 1042 });
    expect(await recordProgress('octocat', repo, record.attempt + 1, { percent: 99 })).toBe(false);
    let read = await api('GET', `/repos/octocat/${repo}/import`);
    expect(read.body).toMatchObject({
      status: 'importing',
      import_percent: 40,
      percent: 40,
      commit_count: 1042,
    });
    await recordProgress('octocat', repo, record.attempt, { status: 'pushing', pushPercent: 75 });
    read = await api('GET', `/repos/octocat/${repo}/import`);
    expect(read.body).toMatchObject({ status: 'pushing', status_text: 'Pushing...', push_percent: 75 });
    await enterStatus('octocat', repo, record.attempt, 'error', {
      failedStep: 'push',
      errorMessage: 'The push failed',
    });
    read = await api('GET', `/repos/octocat/${repo}/import`);
    expect(read.body).toMatchObject({
      status: 'error',
      failed_step: 'push',
      error_message: 'The push failed',
    });
    expect(read.body).not.toHaveProperty('push_percent');
    expect(read.body).not.toHaveProperty('import_percent');
  });
});

describe('update', () => {
  it('takes credentials after auth_failed: status detecting, and a new attempt when no execution waits', async () => {
    const { repo, record } = await started();
    const refused = await api('PATCH', `/repos/octocat/${repo}/import`, {
      body: { vcs_username: 'me', vcs_password: 'pw' },
    });
    expect(refused.status).toBe(422);
    await enterStatus('octocat', repo, record.attempt, 'auth_failed');
    expect(
      (await api('PATCH', `/repos/octocat/${repo}/import`, { body: { vcs_username: 'me' } })).status,
    ).toBe(422);
    const taken = await api('PATCH', `/repos/octocat/${repo}/import`, {
      body: { vcs_username: 'me', vcs_password: 'new-secret' },
    });
    expect(taken.status).toBe(200);
    expect(taken.body.status).toBe('detecting');
    expect(taken.headers.get('location')).toBeNull();
    const after = await getImport('octocat', repo);
    expect(after?.attempt).toBe(record.attempt + 1);
    expect(await openImportCredentials('octocat', repo)).toEqual({ username: 'me', password: 'new-secret' });
    expect(await executionStatus(record.executionArn)).toBe('ABORTED');
    expect(await executionStatus(after?.executionArn)).toBe('RUNNING');
  });

  it('hands a paused execution’s task token to the change that answers it (data level)', async () => {
    const { repo, record } = await started();
    expect(
      await waitForPerson('octocat', repo, record.attempt, 'credentials', 'token-1', 'detection_needs_auth'),
    ).toBe(true);
    const read = await getImport('octocat', repo);
    expect(read).toMatchObject({
      status: 'detection_needs_auth',
      waitingFor: 'credentials',
      taskToken: 'token-1',
    });
    const taken = await storeCredentials(
      'octocat',
      repo,
      { attempt: record.attempt, status: 'detection_needs_auth' },
      'sealed:v1:x',
    );
    expect(taken).toMatchObject({ taskToken: 'token-1' });
    const after = await getImport('octocat', repo);
    expect(after).toMatchObject({ status: 'detecting' });
    expect(after?.taskToken).toBeUndefined();
    expect(after?.waitingFor).toBeUndefined();
  });

  it('takes one of project_choices after detection_found_multiple, and refuses others', async () => {
    const { repo, record } = await started({ vcs_url: ORIGIN });
    const choice = { vcs: 'tfvc', tfvc_project: 'project1', human_name: 'project1 (tfs)' };
    expect((await api('PATCH', `/repos/octocat/${repo}/import`, { body: choice })).status).toBe(422);
    await enterStatus('octocat', repo, record.attempt, 'detection_found_multiple', {
      projectChoices: [
        { vcs: 'tfvc', tfvcProject: 'project0', humanName: 'project0 (tfs)' },
        { vcs: 'tfvc', tfvcProject: 'project1', humanName: 'project1 (tfs)' },
      ],
    });
    const shown = await api('GET', `/repos/octocat/${repo}/import`);
    expect(shown.body.project_choices).toEqual([
      { vcs: 'tfvc', tfvc_project: 'project0', human_name: 'project0 (tfs)' },
      { vcs: 'tfvc', tfvc_project: 'project1', human_name: 'project1 (tfs)' },
    ]);
    const wrong = await api('PATCH', `/repos/octocat/${repo}/import`, {
      body: { ...choice, human_name: 'nope' },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors[0]).toMatchObject({ field: 'human_name' });
    const chosen = await api('PATCH', `/repos/octocat/${repo}/import`, { body: choice });
    expect(chosen.status).toBe(200);
    expect(chosen.body).toMatchObject({ status: 'importing', vcs: 'tfvc', tfvc_project: 'project1' });
    expect(chosen.body).not.toHaveProperty('project_choices');
    expect((await getImport('octocat', repo))?.chosenProject).toEqual({
      vcs: 'tfvc',
      tfvcProject: 'project1',
      humanName: 'project1 (tfs)',
    });
  });

  it('restarts on an empty body: Location, next attempt, the old execution aborted', async () => {
    const { repo, record } = await started();
    await enterStatus('octocat', repo, record.attempt, 'error', { failedStep: 'raw', errorMessage: 'x' });
    for (const body of [undefined, {}]) {
      const before = await getImport('octocat', repo);
      const restarted = await api('PATCH', `/repos/octocat/${repo}/import`, { body });
      expect(restarted.status).toBe(200);
      expect(restarted.headers.get('location')).toBe(`${stack.baseUrl}/repos/octocat/${repo}/import`);
      expect(restarted.body).toMatchObject({ status: 'importing', import_percent: null, commit_count: null });
      expect(restarted.body).not.toHaveProperty('failed_step');
      const after = await getImport('octocat', repo);
      expect(after?.attempt).toBe((before?.attempt ?? 0) + 1);
      expect(await executionStatus(before?.executionArn)).toBe('ABORTED');
      expect(await executionStatus(after?.executionArn)).toBe('RUNNING');
    }
  });

  it('is 404 without an import and 422 for wrong types', async () => {
    const repo = await newRepo();
    expect((await api('PATCH', `/repos/octocat/${repo}/import`, { body: {} })).status).toBe(404);
    const { repo: started2 } = await started();
    expect(
      (await api('PATCH', `/repos/octocat/${started2}/import`, { body: { vcs_username: 5 } })).status,
    ).toBe(422);
  });
});

describe("the owner's choices (extension fields)", () => {
  const report = async (repo: string) => (await api('GET', `/repos/octocat/${repo}/import/report`)).body;
  const jobChoices = async (repo: string) => {
    const record = await getImport('octocat', repo);
    if (!record) throw new Error('no import item');
    return rawJobOf(record, { url: record.vcsUrl, allowedAddresses: [] }, '/work-dir').choices;
  };

  it('PUT stores them (defaults for those not sent); the report and the raw job carry them; GET …/import does not show them', async () => {
    const { repo: defaults, response } = await started();
    expect(response.body).not.toHaveProperty('choices');
    expect(response.body).not.toHaveProperty('keep_empty_directories');
    expect((await report(defaults)).choices).toEqual({
      keep_empty_directories: false,
      keep_refs_deleted_in_history: true,
      keep_deleted_refs: true,
    });
    expect(await jobChoices(defaults)).toEqual({ keepEmptyDirectories: false, keepDeletedRefs: true });

    const { repo } = await started({ vcs_url: ORIGIN, vcs: 'git', keep_empty_directories: true });
    expect((await report(repo)).choices).toEqual({
      keep_empty_directories: true,
      keep_refs_deleted_in_history: true,
      keep_deleted_refs: true,
    });
    expect(await jobChoices(repo)).toEqual({ keepEmptyDirectories: true, keepDeletedRefs: true });
    const shown = await api('GET', `/repos/octocat/${repo}/import`);
    expect(Object.keys(shown.body).filter((key) => key.startsWith('keep_') || key === 'choices')).toEqual([]);
  });

  it('PUT refuses a non-boolean with 422 and GitHub-shaped errors, and starts nothing', async () => {
    for (const [field, value] of [
      ['keep_empty_directories', 'yes'],
      ['keep_deleted_refs', null],
      ['keep_deleted_refs', 0],
    ] as const) {
      const repo = await newRepo();
      const refused = await api('PUT', `/repos/octocat/${repo}/import`, {
        body: { vcs_url: ORIGIN, vcs: 'git', [field]: value },
      });
      expect(refused.status, JSON.stringify(refused.body)).toBe(422);
      expect(refused.body).toMatchObject({
        message: 'Validation Failed',
        errors: [{ resource: 'Import', field, code: 'invalid' }],
      });
      expect(await getImport('octocat', repo)).toBeUndefined();
    }
  });

  it('a restarting PATCH changes them (others kept); with credentials or a project choice it is 422', async () => {
    const { repo, record } = await started({ vcs_url: ORIGIN, vcs: 'git', keep_empty_directories: true });
    const restarted = await api('PATCH', `/repos/octocat/${repo}/import`, {
      body: { keep_deleted_refs: false },
    });
    expect(restarted.status, JSON.stringify(restarted.body)).toBe(200);
    expect(restarted.headers.get('location')).toBe(`${stack.baseUrl}/repos/octocat/${repo}/import`);
    expect(restarted.body).not.toHaveProperty('choices');
    expect((await getImport('octocat', repo))?.attempt).toBe(record.attempt + 1);
    expect((await report(repo)).choices).toEqual({
      keep_empty_directories: true,
      keep_refs_deleted_in_history: false,
      keep_deleted_refs: false,
    });
    expect(await jobChoices(repo)).toEqual({ keepEmptyDirectories: true, keepDeletedRefs: false });

    const mixed = await api('PATCH', `/repos/octocat/${repo}/import`, {
      body: { vcs_username: 'u', vcs_password: 'p', keep_empty_directories: false },
    });
    expect(mixed.status).toBe(422);
    expect(mixed.body.errors).toEqual([
      expect.objectContaining({ resource: 'Import', field: 'keep_empty_directories', code: 'invalid' }),
    ]);
    const wrongType = await api('PATCH', `/repos/octocat/${repo}/import`, {
      body: { keep_deleted_refs: 'no' },
    });
    expect(wrongType.status).toBe(422);
    expect(wrongType.body.errors).toEqual([
      { resource: 'Import', field: 'keep_deleted_refs', code: 'invalid' },
    ]);
    expect((await report(repo)).choices).toEqual({
      keep_empty_directories: true,
      keep_refs_deleted_in_history: false,
      keep_deleted_refs: false,
    });
  });
});

describe('cancel', () => {
  it('stops the execution, removes the import, its authors, working directories and hosted repository; a new PUT works', async () => {
    const { repo, record } = await started();
    await addAuthors('octocat', repo, record.importId, record.attempt, [
      { remoteId: 'a <a@x>', remoteName: 'a', email: 'a@x', name: 'a' },
    ]);
    const work = importWorkRoot(config().importWorkDir, 'octocat', repo);
    const hosted = hostedRepositoryPath(config().repositoriesDir, 'octocat', repo);
    await mkdir(`${work}/1`, { recursive: true });
    await mkdir(hosted, { recursive: true });

    const cancelled = await api('DELETE', `/repos/octocat/${repo}/import`);
    expect(cancelled.status).toBe(204);
    expect((await api('GET', `/repos/octocat/${repo}/import`)).status).toBe(404);
    expect((await api('DELETE', `/repos/octocat/${repo}/import`)).status).toBe(404);
    expect(await executionStatus(record.executionArn)).toBe('ABORTED');
    expect(await listAuthors('octocat', repo, record.importId)).toEqual([]);
    expect(existsSync(work)).toBe(false);
    expect(existsSync(hosted)).toBe(false);
    // A late write of the cancelled attempt finds nothing to write to.
    expect(await recordProgress('octocat', repo, record.attempt, { percent: 50 })).toBe(false);

    const again = await api('PUT', `/repos/octocat/${repo}/import`, {
      body: { vcs_url: ORIGIN, vcs: 'git' },
    });
    expect(again.status).toBe(201);
    const next = await getImport('octocat', repo);
    expect(next?.importId).not.toBe(record.importId);
    expect(next?.attempt).toBe(record.attempt + 1);
    expect(await executionStatus(next?.executionArn)).toBe('RUNNING');
    expect(await recordProgress('octocat', repo, record.attempt, { percent: 50 })).toBe(false);
  });
});

describe('authors', () => {
  it('lists authors above since, ascending; maps them; 404 unknown; 422 after the owner pushed', async () => {
    const { repo, record } = await started();
    const url = `/repos/octocat/${repo}/import/authors`;
    expect((await api('GET', url)).body).toEqual([]);
    const found = [
      { remoteId: 'Ann <ann@x>', remoteName: 'Ann', email: 'ann@x', name: 'Ann' },
      { remoteId: 'Bob <bob@x>', remoteName: 'Bob', email: 'bob@x', name: 'Bob' },
      { remoteId: 'Cy <cy@x>', remoteName: 'Cy', email: 'cy@x', name: 'Cy' },
    ];
    expect(await addAuthors('octocat', repo, record.importId, record.attempt, found)).toBe(3);
    expect(await addAuthors('octocat', repo, record.importId, record.attempt, [...found].reverse())).toBe(0);
    expect(await addAuthors('octocat', repo, record.importId, record.attempt + 1, [found[0] as never])).toBe(
      0,
    );
    const all = await api('GET', url);
    expect(all.body.map((author: { remote_name: string }) => author.remote_name)).toEqual([
      'Ann',
      'Bob',
      'Cy',
    ]);
    const ids = all.body.map((author: { id: number }) => author.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(all.body[0]).toEqual({
      id: ids[0],
      remote_id: 'Ann <ann@x>',
      remote_name: 'Ann',
      email: 'ann@x',
      name: 'Ann',
      url: `${stack.baseUrl}${url}/${ids[0]}`,
      import_url: `${stack.baseUrl}/repos/octocat/${repo}/import`,
    });
    expect((await api('GET', `/repos/octocat/${repo}/import`)).body.authors_count).toBe(3);
    expect((await api('GET', `${url}?since=${ids[0]}`)).body.map((a: { id: number }) => a.id)).toEqual(
      ids.slice(1),
    );
    expect((await api('GET', `${url}?since=${ids[2]}`)).body).toEqual([]);
    for (const since of ['abc', '-1', '1.5', '1e3'])
      expect((await api('GET', `${url}?since=${since}`)).status).toBe(422);

    const mapped = await api('PATCH', `${url}/${ids[1]}`, {
      body: { name: 'Bob the Builder', email: 'bob@example.com' },
    });
    expect(mapped.status).toBe(200);
    expect(mapped.body).toMatchObject({
      id: ids[1],
      remote_id: 'Bob <bob@x>',
      remote_name: 'Bob',
      name: 'Bob the Builder',
      email: 'bob@example.com',
    });
    expect((await api('PATCH', `${url}/999999999`, { body: { name: 'x' } })).status).toBe(404);
    expect((await api('PATCH', `${url}/${ids[1]}`, { body: { email: 'not an email' } })).status).toBe(422);
    expect((await api('PATCH', `${url}/${ids[1]}`, { body: { name: 'a <b>' } })).status).toBe(422);
    expect((await api('PATCH', `${url}/${ids[1]}`, { body: {} })).status).toBe(422);
    expect((await api('PATCH', `${url}/0`, { body: { name: 'x' } })).status).toBe(404);

    await markOwnerPushed('octocat', repo);
    const late = await api('PATCH', `${url}/${ids[0]}`, { body: { name: 'Too Late' } });
    expect(late.status).toBe(422);
    expect((await api('GET', url)).body[0].name).toBe('Ann');
  });

  it('mapping after complete republishes: status mapping, next attempt, a rewrite execution', async () => {
    const { repo, record } = await started();
    await addAuthors('octocat', repo, record.importId, record.attempt, [
      { remoteId: 'Ann <ann@x>', remoteName: 'Ann', email: 'ann@x', name: 'Ann' },
    ]);
    await enterStatus('octocat', repo, record.attempt, 'complete');
    const [author] = await listAuthors('octocat', repo, record.importId);
    const mapped = await api('PATCH', `/repos/octocat/${repo}/import/authors/${author?.id}`, {
      body: { email: 'ann@example.com' },
    });
    expect(mapped.status).toBe(200);
    const after = await getImport('octocat', repo);
    expect(after).toMatchObject({ status: 'mapping', attempt: record.attempt + 1 });
    expect(await executionStatus(after?.executionArn)).toBe('RUNNING');
  });
});

describe('LFS and large files', () => {
  it('refuses bad use_lfs values, stores good ones on both paths, lists large files', async () => {
    const { repo, record } = await started();
    for (const body of [{}, { use_lfs: 'undecided' }, { use_lfs: 'yes' }, { use_lfs: true }]) {
      const refused = await api('PATCH', `/repos/octocat/${repo}/import/lfs`, { body });
      expect(refused.status, JSON.stringify(body)).toBe(422);
      expect(refused.body.errors[0]).toMatchObject({ field: 'use_lfs' });
    }
    const set = await api('PATCH', `/repos/octocat/${repo}/import/lfs`, { body: { use_lfs: 'opt_in' } });
    expect(set.status).toBe(200);
    expect(set.body.use_lfs).toBe('opt_in');
    const short = await api('PATCH', `/octocat/${repo}/import/lfs`, { body: { use_lfs: 'opt_out' } });
    expect(short.status).toBe(200);
    expect(short.body.use_lfs).toBe('opt_out');
    expect(short.headers.get('x-github-media-type')).toBe('github.barred-rock-preview');
    expect(await waitForPerson('octocat', repo, record.attempt, 'lfs_choice', 'token-2', 'importing')).toBe(
      'already-decided',
    );

    expect((await api('GET', `/repos/octocat/${repo}/import/large_files`)).body).toEqual([]);
    const files = [
      { refName: 'refs/heads/main', path: 'big/one.bin', oid: 'a'.repeat(64), size: 150_000_000 },
      { refName: 'refs/tags/v1', path: 'big/two.bin', oid: 'b'.repeat(64), size: 120_000_000 },
    ];
    expect(await setLargeFiles('octocat', repo, record.importId, record.attempt, files)).toBe(true);
    expect(await setLargeFiles('octocat', repo, record.importId, record.attempt + 1, [])).toBe(false);
    const expected = [
      { ref_name: 'refs/heads/main', path: 'big/one.bin', oid: 'a'.repeat(64), size: 150_000_000 },
      { ref_name: 'refs/tags/v1', path: 'big/two.bin', oid: 'b'.repeat(64), size: 120_000_000 },
    ];
    expect((await api('GET', `/repos/octocat/${repo}/import/large_files`)).body).toEqual(expected);
    expect((await api('GET', `/octocat/${repo}/import/large_files`)).body).toEqual(expected);
    expect((await api('GET', `/repos/octocat/${repo}/import`)).body).toMatchObject({
      has_large_files: true,
      large_files_count: 2,
      large_files_size: 270_000_000,
    });
    expect((await api('GET', `/octocat/${await newRepo()}/import/large_files`)).status).toBe(404);
  });

  it('a choice while the execution waits for it takes the token; changing it after complete republishes', async () => {
    const { repo, record } = await started();
    expect(await waitForPerson('octocat', repo, record.attempt, 'lfs_choice', 'token-3', 'importing')).toBe(
      true,
    );
    await setLargeFiles('octocat', repo, record.importId, record.attempt, [
      { refName: 'refs/heads/main', path: 'big.bin', oid: 'c'.repeat(64), size: 200_000_000 },
    ]);
    // The token was never issued: Step Functions ignores it (or, without task tokens, refuses the
    // call and a new attempt replaces the paused one). Either way the token is taken.
    const chosen = await api('PATCH', `/repos/octocat/${repo}/import/lfs`, { body: { use_lfs: 'opt_in' } });
    expect(chosen.status).toBe(200);
    const waiting = await getImport('octocat', repo);
    expect(waiting?.taskToken).toBeUndefined();
    expect(waiting?.useLfs).toBe('opt_in');

    await enterStatus('octocat', repo, waiting?.attempt ?? 0, 'complete');
    const changed = await api('PATCH', `/repos/octocat/${repo}/import/lfs`, { body: { use_lfs: 'opt_out' } });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ status: 'mapping', use_lfs: 'opt_out' });
    const after = await getImport('octocat', repo);
    expect(after?.attempt).toBe((waiting?.attempt ?? 0) + 1);
    expect(await executionStatus(after?.executionArn)).toBe('RUNNING');
  });
});
