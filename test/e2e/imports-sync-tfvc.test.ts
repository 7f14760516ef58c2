import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TFVC_USERS, tfvcHistory } from '#local/tfvc-alpha';
import { serveTfvc, type TfvcProjectSpec, type TfvcServer } from '#local/tfvc-origin';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient, remoteRefs } from '#test/git-client';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';

/**
 * Syncing a followed TFVC project through the API and the real workflow, against the TFVC stand-in
 * (Microsoft's REST specification on 127.0.0.1) whose history grows after the import: the hosted
 * repository after the sync equals a fresh import of the whole project, id for id, and only the
 * new changesets are read again, unless the last one imported changed at the origin.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);

let repoCount = 0;
async function newRepo(): Promise<string> {
  const name = `tfvc-followed-${++repoCount}`;
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${token}` },
    body: JSON.stringify({ name }),
  });
  expect(created.status).toBe(201);
  return name;
}

async function until(repo: string, wanted: string, timeoutMs = 40_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    last = (await api('GET', `/repos/octocat/${repo}/import`)).body;
    if (last.status === wanted) return last;
    if (last.status === 'error' || last.status === 'complete') break;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`import of ${repo} did not reach ${wanted}: ${JSON.stringify(last)}`);
}

async function importAlpha(origin: TfvcServer): Promise<string> {
  const repo = await newRepo();
  const started = await api('PUT', `/repos/octocat/${repo}/import`, {
    vcs_url: origin.collectionUrl,
    vcs: 'tfvc',
    tfvc_project: 'Alpha',
  });
  expect(started.status).toBe(201);
  await until(repo, 'complete');
  return repo;
}

async function sync(repo: string): Promise<void> {
  const started = await api('POST', `/repos/octocat/${repo}/import/sync`);
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  await until(repo, 'complete');
}

const hostedRefs = (repo: string) => remoteRefs(git, `${stack.webUrl}/octocat/${repo}.git`);
const revisionMap = async (repo: string) =>
  (await api('GET', `/repos/octocat/${repo}/import/revisions?per_page=100`)).body as {
    origin_revision: string;
    commit: string;
  }[];

/** What the report says of the project beside its history. */
async function findings(repo: string) {
  const report = (await api('GET', `/repos/octocat/${repo}/import/report`)).body;
  const kinds = ['empty_directories', 'tfvc_labels', 'tfvc_shelvesets', 'tfvc_branches'];
  return Object.fromEntries(
    Object.entries(report).filter(([key]) => kinds.some((kind) => key === kind || key === `${kind}_count`)),
  );
}

/** The changesets whose changes or file contents the stand-in was asked for since request `from`. */
function changesetsRead(origin: TfvcServer, from: number): number[] {
  const ids = new Set<number>();
  for (const line of origin.requests.slice(from)) {
    const url = new URL(line.slice(line.indexOf(' ') + 1), 'http://stand-in');
    const changes = /\/_apis\/tfvc\/changesets\/(\d+)\/changes$/.exec(url.pathname);
    if (changes) ids.add(Number(changes[1]));
    const version = url.searchParams.get('versionDescriptor.version');
    if (url.pathname.endsWith('/_apis/tfvc/items') && version !== null) ids.add(Number(version));
  }
  return [...ids].sort((a, b) => a - b);
}

const { ada, bob } = TFVC_USERS;
const [ALPHA, BETA] = tfvcHistory() as [TfvcProjectSpec, TfvcProjectSpec];

/** Alpha cut after changeset `last`, with a label deleted later: the history the first import sees. */
const alphaUpTo = (last: number): TfvcProjectSpec => ({
  ...ALPHA,
  changesets: ALPHA.changesets.filter((changeset) => changeset.id <= last),
  labels: [{ id: 1, name: 'Before the move', owner: bob, date: '2024-01-05T09:00:00.000Z' }],
});

/**
 * Alpha grown past changeset 10: a branch made and deleted again (its folder with it), the readme
 * edited, a file in the folder left empty by changeset 10; the first label deleted, another added.
 */
const ALPHA_GROWN: TfvcProjectSpec = {
  ...ALPHA,
  changesets: [
    ...ALPHA.changesets,
    {
      id: 11,
      author: bob,
      date: '2024-02-01T09:00:00.000Z',
      comment: 'Branch src to feature',
      changes: [
        { path: 'feature', changeType: 'add, branch', folder: true },
        { path: 'feature/app.ts', changeType: 'add, branch', content: 'console.log(2);\n' },
      ],
    },
    {
      id: 12,
      author: ada,
      date: '2024-02-02T09:00:00.000Z',
      comment: 'Drop the feature branch\r\n\r\nIt was merged by hand.',
      changes: [
        { path: 'feature', changeType: 'delete', folder: true },
        { path: 'feature/app.ts', changeType: 'delete' },
        { path: 'README.md', changeType: 'edit', content: '# Alpha\n\nFollowed.\n' },
      ],
    },
    {
      id: 13,
      author: ada,
      date: '2024-02-03T09:00:00.000Z',
      comment: '',
      changes: [{ path: 'tools/run.cmd', changeType: 'add, edit, encoding', content: '@echo run\r\n' }],
    },
  ],
  labels: [{ id: 2, name: 'Release 1', owner: ada, date: '2024-02-02T10:00:00.000Z', description: 'v1' }],
  branches: [{ path: 'feature', parent: 'src', owner: bob, date: '2024-02-01T09:00:00.000Z', deleted: true }],
};

beforeAll(async () => {
  stack = await startTestStack();
  git = await gitClient();
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe('syncing a followed TFVC project', () => {
  it('replays only the changesets after the last one imported, and ends where a fresh import does', async () => {
    const origin = await serveTfvc({ projects: [alphaUpTo(6), BETA], maxPage: 3 });
    try {
      const repo = await importAlpha(origin);
      expect(
        (await api('PUT', `/repos/octocat/${repo}/import/sync`, { interval_minutes: null })).status,
      ).toBe(200);
      const before = await hostedRefs(repo);

      expect(await findings(repo)).toMatchObject({ tfvc_labels: [{ name: 'Before the move' }] });

      // The origin moves on: changesets 7 to 13 (a folder renamed, another emptied and filled
      // again, a branch made and deleted), a label deleted and another made.
      origin.replaceHistory([ALPHA_GROWN, BETA]);
      const seen = origin.requests.length;
      await sync(repo);
      // Only the new changesets were read: a whole re-import reads 3, 4 and 6 again.
      expect(changesetsRead(origin, seen)).toEqual([7, 8, 9, 10, 11, 12, 13]);

      const fresh = await importAlpha(origin);
      const after = await hostedRefs(repo);
      expect(after).toEqual(await hostedRefs(fresh));
      expect(after).not.toEqual(before);
      const map = await revisionMap(repo);
      expect(map).toEqual(await revisionMap(fresh));
      expect(map.map((entry) => entry.origin_revision)).toEqual([
        '1',
        '3',
        '4',
        '6',
        '7',
        '8',
        '9',
        '10',
        '11',
        '12',
        '13',
      ]);
      // The commit of changeset 6 is the one published before the sync.
      expect(before).toContain(`${map[3]?.commit} refs/heads/main`);
      expect(await findings(repo)).toEqual(await findings(fresh));
      expect(await findings(repo)).toMatchObject({
        tfvc_labels: [{ name: 'Release 1' }],
        empty_directories_count: 0,
      });
      expect((await api('GET', `/repos/octocat/${repo}/import/sync`)).body).toMatchObject({
        origin_revision: '13',
        last_sync: { status: 'succeeded', new_commits: 7 },
      });

      // Nothing new: nothing read, nothing moves.
      const idle = origin.requests.length;
      await sync(repo);
      expect(changesetsRead(origin, idle)).toEqual([]);
      expect(await hostedRefs(repo)).toEqual(after);
    } finally {
      await origin.close();
    }
  }, 60_000);

  it('imports the whole history again when the last changeset imported changed or is gone at the origin', async () => {
    const origin = await serveTfvc({ projects: [ALPHA, BETA], maxPage: 3 });
    try {
      const repo = await importAlpha(origin);
      expect(
        (await api('PUT', `/repos/octocat/${repo}/import/sync`, { interval_minutes: null })).status,
      ).toBe(200);
      // Changeset 10's comment edited on the server (as an administrator may): 10 differs.
      const edited = ALPHA_GROWN.changesets.map((changeset) =>
        changeset.id === 10 ? { ...changeset, comment: 'Move lib to core (edited)' } : changeset,
      );
      origin.replaceHistory([{ ...ALPHA_GROWN, changesets: edited }, BETA]);
      let seen = origin.requests.length;
      await sync(repo);
      expect(changesetsRead(origin, seen)).toEqual([1, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13]);
      let fresh = await importAlpha(origin);
      expect(await hostedRefs(repo)).toEqual(await hostedRefs(fresh));
      expect(await revisionMap(repo)).toEqual(await revisionMap(fresh));

      // Changeset 13, the last imported now, destroyed (`tf destroy` of the only file it added).
      origin.replaceHistory([{ ...ALPHA_GROWN, changesets: edited.filter((c) => c.id !== 13) }, BETA]);
      seen = origin.requests.length;
      await sync(repo);
      expect(changesetsRead(origin, seen)).toEqual([1, 3, 4, 6, 7, 8, 9, 10, 11, 12]);
      fresh = await importAlpha(origin);
      expect(await hostedRefs(repo)).toEqual(await hostedRefs(fresh));
      const map = await revisionMap(repo);
      expect(map).toEqual(await revisionMap(fresh));
      expect(map.at(-1)?.origin_revision).toBe('12');
    } finally {
      await origin.close();
    }
  }, 60_000);
});
