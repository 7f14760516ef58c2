import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSvnHistory, type SvnHistory } from '#bench/svn-dump';
import { type SvnServer, serveSvn } from '#local/svn-origins';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient, remoteRefs } from '#test/git-client';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';
import { recordToolCalls } from '#test/tool-calls';

/**
 * A sync of a followed Subversion origin of a few hundred revisions (issue 36, item 5) reads only
 * the revisions the origin gained: every `svn log` and `svnadmin dump` the service runs during the
 * sync starts after the import's last revision, and `svn list -R` lists only the branches the new
 * revisions changed, never the whole tree. Recorded by putting recorders of the real tools first
 * on PATH. The synced repository still equals a fresh import, id for id.
 */

const exec = promisify(execFile);
const REVISIONS = 300;

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let work: string;
let origin: SvnServer;
let history: SvnHistory;

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);
const env = () => ({ PATH: process.env.PATH, HOME: work, LC_ALL: 'C' });

async function until(repo: string, wanted: string, timeoutMs = 300_000) {
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    last = (await api('GET', `/repos/octocat/${repo}/import`)).body;
    if (last.status === wanted) return last;
    if (last.status === 'error') break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`import of ${repo} did not reach ${wanted}: ${JSON.stringify(last)}`);
}

let repoCount = 0;
async function imported(): Promise<string> {
  const repo = `svn-incremental-${++repoCount}`;
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${token}` },
    body: JSON.stringify({ name: repo }),
  });
  expect(created.status).toBe(201);
  const put = await api('PUT', `/repos/octocat/${repo}/import`, {
    vcs_url: origin.url('big'),
    vcs: 'subversion',
  });
  expect(put.status, JSON.stringify(put.body)).toBe(201);
  await until(repo, 'complete');
  return repo;
}

/** Every page of the revision map. */
async function revisionMap(repo: string): Promise<unknown[]> {
  const entries: unknown[] = [];
  for (let page = 1; ; page++) {
    const answer = await api('GET', `/repos/octocat/${repo}/import/revisions?per_page=100&page=${page}`);
    expect(answer.status).toBe(200);
    entries.push(...answer.body);
    if (!(answer.headers.get('link') ?? '').includes('rel="next"')) return entries;
  }
}

/** The import report's findings: everything but what names the repository or a time. */
async function findings(repo: string): Promise<Record<string, unknown>> {
  const report = (await api('GET', `/repos/octocat/${repo}/import/report`)).body as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(report).filter(
      ([key, value]) => !key.endsWith('_at') && !(typeof value === 'string' && value.includes(repo)),
    ),
  );
}
const hostedRefs = (repo: string) => remoteRefs(git, `${stack.webUrl}/octocat/${repo}.git`);

/** The first revision of `-r A:B` in a call, or undefined without one. */
const rangeStart = (call: readonly string[]) => {
  const at = call.indexOf('-r');
  return at < 0 ? undefined : Number((call[at + 1] ?? '').split(':')[0]);
};

beforeAll(async () => {
  stack = await startTestStack();
  git = await gitClient();
  work = await mkdtemp(join(tmpdir(), 'svn-incremental-e2e-'));
  const origins = join(work, 'origins');
  await mkdir(origins);
  history = await makeSvnHistory(origins, 'big', {
    revisions: REVISIONS,
    branches: 4,
    tags: 6,
    files: 30,
    authors: ['ada', 'grace', 'linus', 'barbara', 'ken'],
  });
  origin = await serveSvn(origins);
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 300_000);
afterAll(async () => {
  await stack?.stop();
  await origin?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('syncing a long followed Subversion history', () => {
  it('reads only the new revisions, and equals a fresh import id for id', async () => {
    const repo = await imported();
    expect((await api('PUT', `/repos/octocat/${repo}/import/sync`, { interval_minutes: null })).status).toBe(
      200,
    );
    // Two new revisions: a file changed and an empty folder on trunk, then a new branch.
    const file = join(work, 'changed.txt');
    await writeFile(file, 'changed after the import\n');
    const url = `file://${history.path}`;
    await exec(
      'svnmucc',
      ['-U', url, '-m', 'Change', '--username', 'ada', 'put', file, 'trunk/build.sh', 'mkdir', 'trunk/empty'],
      { env: env() },
    );
    await exec(
      'svnmucc',
      ['-U', url, '-m', 'Branch late', '--username', 'grace', 'cp', 'HEAD', 'trunk', 'branches/late'],
      { env: env() },
    );

    const recorder = await recordToolCalls(['svn', 'svnadmin', 'svnlook']);
    let calls: string[][];
    try {
      const started = await api('POST', `/repos/octocat/${repo}/import/sync`);
      expect(started.status, JSON.stringify(started.body)).toBe(202);
      await until(repo, 'complete');
    } finally {
      calls = await recorder.calls();
      await recorder.restore();
    }

    const logs = calls.filter((call) => call[0] === 'svn' && call[1] === 'log');
    expect(logs.length).toBeGreaterThan(0);
    for (const call of logs) expect.soft(rangeStart(call) ?? 0, call.join(' ')).toBeGreaterThan(REVISIONS);
    for (const call of calls.filter((call) => call[0] === 'svnadmin' && call[1] === 'dump'))
      expect.soft(rangeStart(call) ?? 0, call.join(' ')).toBeGreaterThan(REVISIONS);
    // A recursive listing only of what the new revisions changed: trunk and the new branch.
    for (const call of calls.filter((call) => call[0] === 'svn' && call[1] === 'list' && call.includes('-R')))
      expect.soft(call.at(-1), call.join(' ')).toMatch(/\/raw\.svn\/(trunk|branches\/late)@\d*$/);

    const fresh = await imported();
    expect(await hostedRefs(repo)).toEqual(await hostedRefs(fresh));
    expect(await revisionMap(repo)).toEqual(await revisionMap(fresh));
    expect(await findings(repo)).toEqual(await findings(fresh));
    expect((await findings(repo)).empty_directories).toContainEqual(
      expect.objectContaining({ path: '/trunk/empty' }),
    );
  }, 900_000);
});
