import { execFile } from 'node:child_process';
import { mkdtemp, readFile, stat, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DescribeExecutionCommand, GetExecutionHistoryCommand, SFNClient } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { ENV } from '#shared/config';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient, remoteRefs } from '#test/git-client';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';

/**
 * Whole imports through the API and the real workflow (the ASL file run by the local Step
 * Functions endpoint, the task handlers in process, git on 127.0.0.1), checked the way a user
 * would: `git ls-remote` and `git clone` of the hosted repository against the origin.
 */

const LARGE_FILE_BYTES = 200_000;
process.env[ENV.largeFileBytes] = String(LARGE_FILE_BYTES);

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let sfn: SFNClient;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let publicOrigin: OriginServer;
let protectedOrigin: OriginServer;
let slowOrigin: OriginServer;
/** The object the damaged origin lost. */
let lostTree: string;
const SECRET = { username: 'origin-user', password: 'origin-secret-7' };
const AUTHORS = [
  { name: 'Ada Lovelace', email: 'ada@example.org' },
  { name: 'Grace Hopper', email: 'grace@example.org' },
];

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);

let repoCount = 0;
async function newRepo(): Promise<string> {
  const name = `imported-${++repoCount}`;
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${token}` },
    body: JSON.stringify({ name }),
  });
  expect(created.status).toBe(201);
  return name;
}

/** Polls the import until `done` holds for it; fails with the last import seen. */
async function until(repo: string, done: (body: Record<string, unknown>) => boolean, timeoutMs = 45_000) {
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    const response = await api('GET', `/repos/octocat/${repo}/import`);
    last = response.body;
    if (done(last)) return last;
    if (last.status === 'error' && !done(last)) break;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`import of ${repo} did not get there: ${JSON.stringify(last)}`);
}
const status = (wanted: string) => (body: Record<string, unknown>) => body.status === wanted;

const hosted = (repo: string) => `${stack.webUrl}/octocat/${repo}.git`;

async function executionOf(repo: string) {
  const { executions } = await listExecutions(repo);
  return executions;
}
async function listExecutions(repo: string) {
  const arns: string[] = [];
  for (let attempt = 1; attempt < 10; attempt++) {
    const arn = `arn:aws:states:us-east-1:123456789012:execution:SourceImport:octocat.${repo}.attempt-${attempt}`;
    const found = await sfn.send(new DescribeExecutionCommand({ executionArn: arn })).catch(() => undefined);
    if (!found) break;
    arns.push(arn);
  }
  return { executions: arns };
}
async function statesEntered(executionArn: string): Promise<string[]> {
  const names: string[] = [];
  let nextToken: string | undefined;
  do {
    const page = await sfn.send(
      new GetExecutionHistoryCommand({ executionArn, maxResults: 1000, nextToken }),
    );
    for (const event of page.events ?? [])
      if (event.stateEnteredEventDetails?.name) names.push(event.stateEnteredEventDetails.name);
    nextToken = page.nextToken;
  } while (nextToken);
  return names;
}

beforeAll(async () => {
  stack = await startTestStack();
  sfn = new SFNClient({
    endpoint: stack.stepFunctionsEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  git = await gitClient();
  const root = await mkdtemp(join(tmpdir(), 'import-origins-'));
  await Promise.all([
    makeFixtureRepository(join(root, 'tagged.git'), {
      commits: 60,
      branches: 3,
      annotatedTags: 4,
      authors: AUTHORS,
    }),
    makeFixtureRepository(join(root, 'large.git'), {
      commits: 12,
      authors: AUTHORS,
      largeFile: { path: 'assets/video.bin', bytes: LARGE_FILE_BYTES + 50_000 },
    }),
    makeFixtureRepository(join(root, 'damaged.git'), { commits: 3 }),
  ]);
  // A server disk that lost an object: the tip's root tree (the fixture's objects are loose).
  const damaged = join(root, 'damaged.git');
  lostTree = (
    await promisify(execFile)('git', ['-C', damaged, 'rev-parse', 'HEAD:'], {
      env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: damaged },
    })
  ).stdout.trim();
  await unlink(join(damaged, 'objects', lostTree.slice(0, 2), lostTree.slice(2)));
  publicOrigin = await serveGitHttp(root);
  protectedOrigin = await serveGitHttp(root, { auth: SECRET });
  slowOrigin = await serveGitHttp(root, { delayMs: 1500 });
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await publicOrigin?.close();
  await protectedOrigin?.close();
  await slowOrigin?.close();
});

describe('a Git import through the API and the workflow', () => {
  it('detects git, imports every branch and annotated tag with the origin ids, and finds the authors', async () => {
    const repo = await newRepo();
    const started = await api('PUT', `/repos/octocat/${repo}/import`, {
      vcs_url: `${publicOrigin.url}/tagged.git`,
    });
    expect(started.status).toBe(201);
    expect(started.body.status).toBe('detecting');
    const done = await until(repo, status('complete'));
    expect(done).toMatchObject({ vcs: 'git', status_text: 'Done', authors_count: 2, has_large_files: false });

    expect(await remoteRefs(git, hosted(repo))).toEqual(
      await remoteRefs(git, `${publicOrigin.url}/tagged.git`),
    );
    const authors = await api('GET', `/repos/octocat/${repo}/import/authors`);
    expect(authors.body.map((a: { name: string }) => a.name).sort()).toEqual([
      'Ada Lovelace',
      'Grace Hopper',
    ]);
    const repository = (await (await fetch(`${stack.baseUrl}/repos/octocat/${repo}`)).json()) as {
      size: number;
    };
    expect(repository.size).toBeGreaterThan(0);

    const [execution] = await executionOf(repo);
    const states = await statesEntered(execution ?? '');
    expect(states.slice(0, 4)).toEqual(['WhereToStart', 'Detect', 'DetectionOutcome', 'ImportRawHistory']);
    expect(states.at(-1)).toBe('Complete');
    expect(states.length).toBeLessThanOrEqual(30);
  });

  it('waits for the LFS choice when a large file is in history, then stores it in Git LFS (opt_in)', async () => {
    const repo = await newRepo();
    await api('PUT', `/repos/octocat/${repo}/import`, {
      vcs_url: `${publicOrigin.url}/large.git`,
      vcs: 'git',
    });
    const waiting = await until(repo, (b) => b.has_large_files === true && b.import_percent === 100);
    expect(waiting).toMatchObject({ status: 'importing', use_lfs: 'undecided', large_files_count: 1 });
    const files = await api('GET', `/repos/octocat/${repo}/import/large_files`);
    expect(files.body).toEqual([
      expect.objectContaining({
        path: 'assets/video.bin',
        size: LARGE_FILE_BYTES + 50_000,
        ref_name: expect.stringMatching(/^refs\//),
      }),
    ]);

    // Author mapping before the push: the published history carries the new identity.
    const authors = (await api('GET', `/repos/octocat/${repo}/import/authors`)).body as {
      id: number;
      name: string;
    }[];
    const ada = authors.find((author) => author.name === 'Ada Lovelace');
    const mapped = await api('PATCH', `/repos/octocat/${repo}/import/authors/${ada?.id}`, {
      name: 'Ada King',
      email: 'ada@king.example',
    });
    expect(mapped.status).toBe(200);

    expect((await api('PATCH', `/repos/octocat/${repo}/import/lfs`, { use_lfs: 'opt_in' })).status).toBe(200);
    await until(repo, status('complete'));

    const dir = await mkdtemp(join(tmpdir(), 'lfs-clone-'));
    const clone = await git(['clone', '-q', hosted(repo), dir]);
    expect(clone.code, clone.stderr).toBe(0);
    // The file exists only in history (added, then deleted): check out the commit that added it,
    // and its LFS object comes back whole through the LFS API.
    const history = await git(['log', '--format=%H', '--', 'assets/video.bin'], { cwd: dir });
    const added = history.stdout.trim().split('\n').at(-1) ?? '';
    const checkout = await git(['checkout', '-q', added], { cwd: dir });
    expect(checkout.code, checkout.stderr).toBe(0);
    expect((await stat(join(dir, 'assets/video.bin'))).size).toBe(LARGE_FILE_BYTES + 50_000);
    expect(await readFile(join(dir, '.gitattributes'), 'utf8')).toContain('filter=lfs');
    const names = await git(['log', '--all', '--format=%an <%ae>'], { cwd: dir });
    expect(names.stdout).toContain('Ada King <ada@king.example>');
    expect(names.stdout).not.toContain('Ada Lovelace');
  });

  it('removes large files from every ref with opt_out', async () => {
    const repo = await newRepo();
    await api('PUT', `/repos/octocat/${repo}/import`, {
      vcs_url: `${publicOrigin.url}/large.git`,
      vcs: 'git',
    });
    await until(repo, (b) => b.has_large_files === true);
    await api('PATCH', `/repos/octocat/${repo}/import/lfs`, { use_lfs: 'opt_out' });
    await until(repo, status('complete'));
    const dir = await mkdtemp(join(tmpdir(), 'opt-out-'));
    expect((await git(['clone', '-q', '--mirror', hosted(repo), dir])).code).toBe(0);
    const objects = await git(['cat-file', '--batch-all-objects', '--batch-check=%(objectsize)'], {
      cwd: dir,
    });
    expect(Math.max(...objects.stdout.trim().split('\n').map(Number))).toBeLessThanOrEqual(LARGE_FILE_BYTES);
  });

  it('maps an author after complete by rewriting and publishing the history again', async () => {
    const repo = await newRepo();
    await api('PUT', `/repos/octocat/${repo}/import`, {
      vcs_url: `${publicOrigin.url}/tagged.git`,
      vcs: 'git',
    });
    await until(repo, status('complete'));
    const before = await remoteRefs(git, hosted(repo));
    const authors = (await api('GET', `/repos/octocat/${repo}/import/authors`)).body as {
      id: number;
      name: string;
    }[];
    const grace = authors.find((author) => author.name === 'Grace Hopper');
    expect(
      (
        await api('PATCH', `/repos/octocat/${repo}/import/authors/${grace?.id}`, {
          name: 'Amazing Grace',
          email: 'grace@navy.example',
        })
      ).status,
    ).toBe(200);
    await until(repo, status('complete'));
    const after = await remoteRefs(git, hosted(repo));
    expect(after).not.toEqual(before);
    const dir = await mkdtemp(join(tmpdir(), 'remapped-'));
    expect((await git(['clone', '-q', '--mirror', hosted(repo), dir])).code).toBe(0);
    const names = await git(['log', '--all', '--format=%an'], { cwd: dir });
    expect(names.stdout).toContain('Amazing Grace');
    expect(names.stdout).not.toContain('Grace Hopper');
  });
});

describe('credentials', () => {
  it('detection_needs_auth, then credentials: detection runs again and the import completes', async () => {
    const repo = await newRepo();
    await api('PUT', `/repos/octocat/${repo}/import`, { vcs_url: `${protectedOrigin.url}/tagged.git` });
    await until(repo, status('detection_needs_auth'));
    const resumed = await api('PATCH', `/repos/octocat/${repo}/import`, {
      vcs_username: SECRET.username,
      vcs_password: SECRET.password,
    });
    expect(resumed.status).toBe(200);
    expect(resumed.body.status).toBe('detecting');
    await until(repo, status('complete'));
    expect(await remoteRefs(git, hosted(repo))).toEqual(
      await remoteRefs(git, `${publicOrigin.url}/tagged.git`),
    );
  });

  it('auth_failed when the origin refuses the import, then credentials resume it', async () => {
    const repo = await newRepo();
    await api('PUT', `/repos/octocat/${repo}/import`, {
      vcs_url: `${protectedOrigin.url}/tagged.git`,
      vcs: 'git',
      vcs_username: SECRET.username,
      vcs_password: 'not-the-password',
    });
    const failed = await until(repo, status('auth_failed'));
    expect(JSON.stringify(failed)).not.toContain('not-the-password');
    await api('PATCH', `/repos/octocat/${repo}/import`, {
      vcs_username: SECRET.username,
      vcs_password: SECRET.password,
    });
    await until(repo, status('complete'));
  });
});

describe('restart, cancel and errors', () => {
  it('restarts a complete import as a new attempt with Location', async () => {
    const repo = await newRepo();
    await api('PUT', `/repos/octocat/${repo}/import`, {
      vcs_url: `${publicOrigin.url}/tagged.git`,
      vcs: 'git',
    });
    await until(repo, status('complete'));
    const restarted = await api('PATCH', `/repos/octocat/${repo}/import`, {});
    expect(restarted.status).toBe(200);
    expect(restarted.body.status).toBe('importing');
    expect(restarted.headers.get('location')).toBe(`${stack.baseUrl}/repos/octocat/${repo}/import`);
    await until(repo, status('complete'));
    expect(await executionOf(repo)).toHaveLength(2);
  });

  it('cancels an import waiting for the LFS choice: the execution stops, the repository is empty, a new import works', async () => {
    const repo = await newRepo();
    await api('PUT', `/repos/octocat/${repo}/import`, {
      vcs_url: `${publicOrigin.url}/large.git`,
      vcs: 'git',
    });
    await until(repo, (b) => b.has_large_files === true);
    const [execution] = await executionOf(repo);
    expect((await api('DELETE', `/repos/octocat/${repo}/import`)).status).toBe(204);
    expect((await sfn.send(new DescribeExecutionCommand({ executionArn: execution }))).status).toBe(
      'ABORTED',
    );
    expect((await api('GET', `/repos/octocat/${repo}/import`)).status).toBe(404);
    expect(await remoteRefs(git, hosted(repo))).toEqual([]);

    expect(
      (
        await api('PUT', `/repos/octocat/${repo}/import`, {
          vcs_url: `${publicOrigin.url}/tagged.git`,
          vcs: 'git',
        })
      ).status,
    ).toBe(201);
    await until(repo, status('complete'));
    expect((await api('GET', `/repos/octocat/${repo}/import/authors`)).body).toHaveLength(2);
  });

  it('cancels an import mid-fetch: the late chunk of the stopped attempt changes nothing', async () => {
    const repo = await newRepo();
    await api('PUT', `/repos/octocat/${repo}/import`, {
      vcs_url: `${slowOrigin.url}/tagged.git`,
      vcs: 'git',
    });
    await until(repo, status('importing'));
    await new Promise((resolve) => setTimeout(resolve, 500)); // the raw chunk now waits on the origin
    const [execution] = await executionOf(repo);
    expect((await api('DELETE', `/repos/octocat/${repo}/import`)).status).toBe(204);
    expect((await sfn.send(new DescribeExecutionCommand({ executionArn: execution }))).status).toBe(
      'ABORTED',
    );
    // The stopped attempt's invocation finishes its fetch meanwhile; its writes lose their condition.
    await new Promise((resolve) => setTimeout(resolve, 4000));
    expect((await api('GET', `/repos/octocat/${repo}/import`)).status).toBe(404);
    expect(await remoteRefs(git, hosted(repo))).toEqual([]);
  });

  it('reports a missing origin repository as an error of the raw step, in plain words', async () => {
    const repo = await newRepo();
    await api('PUT', `/repos/octocat/${repo}/import`, {
      vcs_url: `${publicOrigin.url}/missing.git`,
      vcs: 'git',
    });
    const failed = await until(repo, status('error'));
    expect(failed.failed_step).toBe('raw');
    expect(typeof failed.error_message).toBe('string');
    expect(failed.error_message).not.toMatch(/askpass|stack|at \//);
  });

  it('says in error_message the step and the origin’s own words when the origin is damaged', async () => {
    const repo = await newRepo();
    await api('PUT', `/repos/octocat/${repo}/import`, {
      vcs_url: `${publicOrigin.url}/damaged.git`,
      vcs: 'git',
    });
    const failed = await until(repo, status('error'));
    expect(failed.failed_step).toBe('raw');
    expect(failed.error_message).toMatch(/^Fetching from the origin failed: /);
    expect(failed.error_message).toContain(`remote: fatal: bad tree object ${lostTree}`);
    expect(failed.error_message).not.toContain(tmpdir());
  });

  it('says detection_found_nothing for a URL with no repository', async () => {
    const repo = await newRepo();
    await api('PUT', `/repos/octocat/${repo}/import`, { vcs_url: `${publicOrigin.url}/page` });
    await until(repo, status('detection_found_nothing'));
  });
});
