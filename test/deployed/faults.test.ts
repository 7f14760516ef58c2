import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeExecutionCommand, SFNClient } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { makeHgFixture, serveHg } from '#local/hg-origins';
import { type ArmedFault, type FaultSpec, faultPlan } from '#local/lambda-faults';
import { makeSvnRepository } from '#local/svn-fixtures';
import { type SvnServer, serveSvn } from '#local/svn-origins';
import { tfvcHistory } from '#local/tfvc-alpha';
import { serveTfvc, type TfvcServer } from '#local/tfvc-origin';
import { ENV } from '#shared/config';
import { type AsDeployed, startAsDeployed } from '#test/as-deployed';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient, remoteRefs } from '#test/git-client';
import { importApiCall } from '#test/import-api';
import { type TcpRelay, tcpRelay } from '#test/tcp-relay';

/**
 * A dead worker costs a retry, never the import (issue 36): the execution environment of a
 * workflow step is killed, runtime client and everything it started, while the step works or
 * after it has answered (the answer lost), and the workflow hears of it as Lambda reports it
 * (`Runtime.ExitError`, or `Lambda.Unknown` for an out-of-memory end). Each such import must end
 * exactly as the same import that never crashed: the same refs and commit ids, revision map,
 * report and authors, and `complete`. The functions run as deployed (`#test/as-deployed`).
 */

const PASSWORD = 'faults-pass-1';
const faults = faultPlan();

let deployed: AsDeployed;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let work: string;
let gitOrigin: OriginServer;
let hgOrigin: OriginServer;
let svnOrigin: SvnServer;
let tfvcOrigin: TfvcServer;
/** The Git origin answering each connection late: its git processes live long enough to be seen. */
let lateGit: TcpRelay;

type Origin = 'git' | 'late-git' | 'svn' | 'hg' | 'tfvc';
const request = (origin: Origin): Record<string, unknown> =>
  ({
    git: { vcs_url: `${gitOrigin.url}/project.git` },
    'late-git': { vcs_url: `http://127.0.0.1:${lateGit.port}/project.git` },
    svn: { vcs_url: svnOrigin.url('repo') },
    hg: { vcs_url: hgOrigin.url },
    tfvc: { vcs_url: tfvcOrigin.collectionUrl, vcs: 'tfvc', tfvc_project: 'Alpha' },
  })[origin];

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(deployed.stack.baseUrl, token, method, path, body);

/** Polls the import until it is complete or has failed; the time running out fails with the logs. */
async function ended(repo: string, timeoutMs = 240_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    last = (await api('GET', `/repos/octocat/${repo}/import`)).body;
    if (last.status === 'complete' || last.status === 'error') return last;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`import of ${repo} is ${JSON.stringify(last)}\n${await deployed.logs()}`);
}

async function startImport(
  repo: string,
  origin: Origin,
  body: Record<string, unknown> = request(origin),
): Promise<void> {
  const created = await fetch(`${deployed.stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${token}` },
    body: JSON.stringify({ name: repo }),
  });
  expect(created.status).toBe(201);
  expect((await api('PUT', `/repos/octocat/${repo}/import`, body)).status).toBe(201);
}

/** The faults of one import, each counted among that repository's invocations only. */
const armed = (repo: string, specs: readonly Omit<FaultSpec, 'match'>[]): ArmedFault[] =>
  specs.map((spec) =>
    faults.inject({ ...spec, match: (event) => (event as { repo?: string }).repo === repo }),
  );

/** Every page of the revision map, in order. */
async function revisionMap(repo: string): Promise<unknown[]> {
  const entries: unknown[] = [];
  for (let page = 1; ; page++) {
    const answer = await api('GET', `/repos/octocat/${repo}/import/revisions?per_page=100&page=${page}`);
    expect(answer.status).toBe(200);
    const listed = answer.body as unknown as unknown[];
    entries.push(...listed);
    if (listed.length < 100) return entries;
  }
}

/** What an import ended with, as a client sees it; the repository's name left out. */
async function outcome(repo: string) {
  const body = await api('GET', `/repos/octocat/${repo}/import`);
  const authors = (await api('GET', `/repos/octocat/${repo}/import/authors`)).body as unknown as Record<
    string,
    unknown
  >[];
  const hosted = new URL(`${deployed.stack.webUrl}/octocat/${repo}.git`);
  hosted.username = 'octocat';
  const seen = {
    status: body.body.status,
    vcs: body.body.vcs,
    commit_count: body.body.commit_count,
    authors_count: body.body.authors_count,
    has_large_files: body.body.has_large_files,
    failed_step: body.body.failed_step,
    error_message: body.body.error_message,
    refs: await remoteRefs(git, hosted.toString(), PASSWORD),
    revisions: await revisionMap(repo),
    report: (await api('GET', `/repos/octocat/${repo}/import/report`)).body,
    authors: authors
      .map(({ remote_id, remote_name, email, name }) => ({ remote_id, remote_name, email, name }))
      .sort((a, b) => String(a.remote_id).localeCompare(String(b.remote_id))),
  };
  return JSON.parse(JSON.stringify(seen).replaceAll(repo, '<repo>'));
}

const baselines = new Map<Origin, Promise<unknown>>();
/** The same import without faults, once per origin. */
function baseline(origin: Origin): Promise<unknown> {
  let known = baselines.get(origin);
  if (!known) {
    const repo = `baseline-${origin}`;
    known = startImport(repo, origin).then(async () => {
      expect((await ended(repo)).status).toBe('complete');
      return outcome(repo);
    });
    baselines.set(origin, known);
  }
  return known;
}

/**
 * A death after the answer comes after the status the step wrote, which a client may see first:
 * waited for (at most 30 s) before it is checked.
 */
const deathOf = (fault: ArmedFault) =>
  Promise.race([fault.died, new Promise((resolve) => setTimeout(resolve, 30_000))]);

/** Imports `origin` into `repo` with `specs` armed; every fault must have killed a worker. */
async function faultedImport(repo: string, origin: Origin, specs: readonly Omit<FaultSpec, 'match'>[]) {
  // The same history whichever way it is reached.
  const expected = await baseline(origin === 'late-git' ? 'git' : origin);
  const injected = armed(repo, specs);
  await startImport(repo, origin);
  const end = await ended(repo);
  for (const fault of injected) await deathOf(fault);
  for (const fault of injected)
    expect(fault.death(), `${fault.spec.fn} never died: ${fault.missed() ?? 'not invoked'}`).toBeDefined();
  // What the import ended with, and the workers' logs, before anything else is read of it.
  if (end.status !== 'complete') expect(end, await deployed.logs()).toMatchObject({ status: 'complete' });
  expect(await outcome(repo), `${JSON.stringify(end)}\n${await deployed.logs()}`).toEqual(expected);
}

/** Waits until the execution of this name has ended (`owner.repo.sync-N`). */
async function executionEnded(name: string): Promise<void> {
  const sfn = new SFNClient({
    endpoint: deployed.stack.stepFunctionsEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const machine = process.env[ENV.importStateMachineArn] ?? '';
  const executionArn = `${machine.replace(':stateMachine:', ':execution:')}:${name}`;
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; ) {
    const { status } = await sfn.send(new DescribeExecutionCommand({ executionArn }));
    if (status !== 'RUNNING') return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${name} is still running`);
}

/** A git process (the command's basename is git or git-*), as the image's tools start it. */
const GIT = /^(\S*\/)?git(-[\w-]+)?\s/;

beforeAll(async () => {
  deployed = await startAsDeployed({ faults });
  git = await gitClient();
  work = await mkdtemp(join(tmpdir(), 'deployed-faults-'));
  await Promise.all([
    makeFixtureRepository(join(work, 'origins', 'project.git'), {
      commits: 6,
      branches: 2,
      annotatedTags: 1,
    }),
    makeFixtureRepository(join(work, 'origins', 'followed.git'), {
      commits: 4,
      branches: 1,
      annotatedTags: 1,
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
  lateGit = await tcpRelay(gitOrigin.port, { delayMs: () => 1500 });
  const user = await createUser(deployed.stack.endpointsFile, 'octocat', PASSWORD);
  token = (await personalToken(deployed.stack.baseUrl, user.auth, ['repo'])).token;
}, 600_000);

afterAll(async () => {
  faults.clear();
  await Promise.all([
    lateGit?.close(),
    gitOrigin?.close(),
    hgOrigin?.close(),
    svnOrigin?.close(),
    tfvcOrigin?.close(),
  ]);
  await deployed?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('a worker killed mid-work', () => {
  it.each([
    ['ImportRawHistory', 'git', GIT],
    ['ImportRawHistory', 'svn', /svn-all-fast-export|svnrdump|svnadmin/],
    ['ImportRawHistory', 'hg', /\bhg\b|python/],
    ['RewriteHistory', 'git', GIT],
    ['Push', 'git', /receive-pack|pack-objects|\bpush\b/],
  ] as const)(
    '%s of a %s import, once a child process runs: the import ends as without the death',
    async (fn, origin, process) => {
      await faultedImport(`mid-${fn}-${origin}`.toLowerCase(), origin, [{ fn, when: 'mid-work', process }]);
    },
    400_000,
  );

  it('Detect of a Git import while it waits for a late origin (Detect runs no child process)', async () => {
    await faultedImport('mid-detect', 'late-git', [{ fn: 'Detect', when: 'mid-work', afterMs: 700 }]);
  }, 400_000);

  it('ImportRawHistory of a TFVC import, once its git runs, reported as Lambda.Unknown (out of memory)', async () => {
    await faultedImport('mid-raw-tfvc', 'tfvc', [
      { fn: 'ImportRawHistory', when: 'mid-work', process: /fast-import|git/, report: 'Lambda.Unknown' },
    ]);
  }, 400_000);

  it('Complete as its event arrives', async () => {
    await faultedImport('mid-complete', 'git', [{ fn: 'Complete', when: 'mid-work', afterMs: 0 }]);
  }, 400_000);

  it('twice within one import: the raw step twice in a row, then the push', async () => {
    await faultedImport('twice', 'svn', [
      { fn: 'ImportRawHistory', when: 'mid-work', process: /svn/ },
      { fn: 'ImportRawHistory', when: 'mid-work', process: /svn-all-fast-export|git/ },
      { fn: 'Push', when: 'mid-work', process: GIT, report: 'Lambda.Unknown' },
    ]);
  }, 400_000);
});

describe('a worker killed after its answer, which is lost', () => {
  it.each([
    ['Detect', 'git'],
    ['ImportRawHistory', 'git'],
    ['ImportRawHistory', 'hg'],
    ['RewriteHistory', 'git'],
    ['Push', 'svn'],
    ['Complete', 'git'],
  ] as const)(
    '%s of a %s import: the import ends as without the death',
    async (fn, origin) => {
      await faultedImport(`lost-${fn}-${origin}`.toLowerCase(), origin, [{ fn, when: 'after-response' }]);
    },
    400_000,
  );
});

describe('a push whose answer is lost after it removed what it pushed', () => {
  /** Imports, then maps Ada: a republish rewrites the history into out.git and pushes that. */
  async function republished(repo: string) {
    await startImport(repo, 'git');
    expect((await ended(repo)).status).toBe('complete');
    const authors = (await api('GET', `/repos/octocat/${repo}/import/authors`)).body as unknown as {
      id: number;
      name: string;
    }[];
    const ada = authors.find((author) => author.name === 'Ada Lovelace');
    const mapped = await api('PATCH', `/repos/octocat/${repo}/import/authors/${ada?.id}`, {
      name: 'Augusta Ada King',
      email: 'ada@king.example',
    });
    expect(mapped.status).toBe(200);
    expect((await ended(repo)).status).toBe('complete');
    return outcome(repo);
  }

  it('answers the same from what it recorded, and the republish ends as without the death', async () => {
    const expected = await republished('baseline-republish');
    const lost = faults.inject({
      fn: 'Push',
      when: 'after-response',
      match: (event) => {
        const { repo, startAt } = event as { repo?: string; startAt?: string };
        return repo === 'lost-republish' && startAt === 'rewrite';
      },
    });
    const got = await republished('lost-republish');
    expect(lost.death()).toBeDefined();
    expect(got, await deployed.logs()).toEqual(expected);
  }, 400_000);
});

describe('a step that keeps dying', () => {
  it('ends the import in error, saying what died and where; a death in recording it is retried too', async () => {
    const repo = 'keeps-dying';
    const injected = armed(repo, [
      ...[1, 1, 1, 1, 1].map(() => ({ fn: 'ImportRawHistory', when: 'mid-work' as const, process: GIT })),
      { fn: 'RecordFailure', when: 'after-response' },
    ]);
    await startImport(repo, 'git');
    const end = await ended(repo);
    expect(end).toMatchObject({ status: 'error', failed_step: 'raw' });
    expect(end.error_message).toMatch(/raw history step .*Runtime\.ExitError/);
    expect(end.error_message).not.toMatch(/failed unexpectedly/);
    // Its death comes after the answer, so after the status a client may already have seen.
    const recording = injected.at(-1);
    if (recording) await deathOf(recording);
    expect(recording?.death()).toBeDefined();
  }, 400_000);
});

describe('a sync whose worker dies', () => {
  it('publishes what is new as a sync that never crashed', async () => {
    const repo = 'followed';
    await startImport(repo, 'late-git', { vcs_url: `http://127.0.0.1:${lateGit.port}/followed.git` });
    expect((await ended(repo)).status).toBe('complete');
    expect((await api('PUT', `/repos/octocat/${repo}/import/sync`, { interval_minutes: null })).status).toBe(
      200,
    );
    const origin = join(work, 'origins', 'followed.git');
    const change = await mkdtemp(join(work, 'followed-change-'));
    expect((await git(['clone', '-q', origin, change])).code).toBe(0);
    await writeFile(join(change, 'after.txt'), 'new at the origin\n');
    for (const args of [
      ['add', 'after.txt'],
      ['commit', '-q', '-m', 'New at the origin'],
      ['push', '-q'],
    ])
      expect((await git(args, { cwd: change })).code).toBe(0);

    const injected = faults.inject({
      fn: 'ImportRawHistory',
      when: 'mid-work',
      process: GIT,
      match: (event) =>
        (event as { repo?: string; sync?: unknown }).repo === repo && !!(event as { sync?: unknown }).sync,
    });
    const lost = faults.inject({
      fn: 'Push',
      when: 'after-response',
      match: (event) =>
        (event as { repo?: string; sync?: unknown }).repo === repo && !!(event as { sync?: unknown }).sync,
    });
    // Complete run again must not count the new commits against the count it wrote (as none).
    const completed = faults.inject({
      fn: 'Complete',
      when: 'after-response',
      match: (event) =>
        (event as { repo?: string; sync?: unknown }).repo === repo && !!(event as { sync?: unknown }).sync,
    });
    expect((await api('POST', `/repos/octocat/${repo}/import/sync`)).status).toBe(202);
    const deadline = Date.now() + 240_000;
    let sync: Record<string, unknown> = {};
    while (Date.now() < deadline) {
      sync = (await api('GET', `/repos/octocat/${repo}/import/sync`)).body;
      const last = sync.last_sync as { status?: string } | null | undefined;
      if (last?.status === 'succeeded' || last?.status === 'failed') break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    // The answer Complete lost: its retry has run once the execution has ended.
    await Promise.race([completed.died, new Promise((resolve) => setTimeout(resolve, 60_000))]);
    await executionEnded(`octocat.${repo}.sync-2`);
    sync = (await api('GET', `/repos/octocat/${repo}/import/sync`)).body;
    const seen = `${JSON.stringify(sync)}\n${await deployed.logs()}`;
    expect(injected.death(), `${injected.missed() ?? 'not invoked'}: ${seen}`).toBeDefined();
    expect(lost.death(), seen).toBeDefined();
    expect(completed.death(), seen).toBeDefined();
    expect(sync, await deployed.logs()).toMatchObject({ last_sync: { status: 'succeeded', new_commits: 1 } });
    expect((await ended(repo)).status).toBe('complete');
    const hosted = new URL(`${deployed.stack.webUrl}/octocat/${repo}.git`);
    hosted.username = 'octocat';
    expect(await remoteRefs(git, hosted.toString(), PASSWORD)).toEqual(await remoteRefs(git, origin));
    const origins = spawnSync('git', ['-C', origin, 'rev-list', '--all'], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter(Boolean)
      .sort();
    const map = (await revisionMap(repo)) as { origin_revision: string; commit: string }[];
    expect(map.map((entry) => entry.origin_revision).sort()).toEqual(origins);
    for (const entry of map) expect(entry.commit).toBe(entry.origin_revision);
  }, 400_000);
});
