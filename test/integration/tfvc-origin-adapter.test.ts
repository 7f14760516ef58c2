import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { ALPHA_FINAL_TREE, TFVC_LONG_COMMENT, tfvcHistory } from '#local/tfvc-alpha';
import { serveTfvc, type TfvcServer } from '#local/tfvc-origin';
import { LOOPBACK_ONLY, rawJobs } from '#test/raw-jobs';
import { stubNetwork } from '#test/stub-network';
import { detectionCandidates, detectOrigin } from '#vcs/adapters';
import {
  ForbiddenAddress,
  OriginAuthFailed,
  OriginFailed,
  type RawJob,
  rawRepositoryPath,
} from '#vcs/origin';
import { tfvcAdapter } from '#vcs/tfvc/adapter';

const exec = promisify(execFile);
const PAT = 'pat-Tfvc42-never-shown';

const gitEnv = (cwd: string) => ({ PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd });
const git = async (cwd: string, ...args: string[]) =>
  (await exec('git', args, { cwd, env: gitEnv(cwd) })).stdout;
const gitBytes = async (cwd: string, ...args: string[]) =>
  (await exec('git', args, { cwd, env: gitEnv(cwd), encoding: 'buffer' })).stdout;

let work: string;
let gitRoot: string;
let two: TfvcServer; // Alpha, Beta (TFVC) and Gamma (Git only); pages of at most 3
let one: TfvcServer; // Alpha and Gamma
let locked: TfvcServer; // 401 without the PAT
let signIn: TfvcServer; // 203 and a sign-in page without the PAT
let gitServer: OriginServer;
/** main's commit id after importing Alpha in one pass. */
let onePass: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'tfvc-work-'));
  gitRoot = await mkdtemp(join(tmpdir(), 'tfvc-git-'));
  const gamma = { name: 'Gamma', tfvc: false, changesets: [] };
  const [alpha, beta] = tfvcHistory();
  if (!alpha || !beta) throw new Error('fixture');
  [two, one, locked, signIn, gitServer] = await Promise.all([
    serveTfvc({ projects: [alpha, beta, gamma], maxPage: 3 }),
    serveTfvc({ projects: [alpha, gamma] }),
    serveTfvc({ projects: [alpha, beta], pat: PAT }),
    serveTfvc({ projects: [alpha], pat: PAT, authStyle: 203 }),
    serveGitHttp(gitRoot),
  ]);
});

afterAll(async () => {
  await Promise.all([two?.close(), one?.close(), locked?.close(), signIn?.close(), gitServer?.close()]);
  await rm(work, { recursive: true, force: true });
  await rm(gitRoot, { recursive: true, force: true });
});

const job = rawJobs(() => work);
const access = (
  url: string,
  extra: { credentials?: { username: string; password: string }; tfvcProject?: string } = {},
) => ({
  url,
  allowedAddresses: LOOPBACK_ONLY,
  ...extra,
});
const withPat = (password = PAT) => ({ credentials: { username: 'anything', password } });

async function importAll(adapter: ReturnType<typeof tfvcAdapter>, raw: RawJob, budgetMs: number) {
  const percents: number[] = [];
  let chunks = 0;
  let last: Awaited<ReturnType<typeof adapter.importRawChunk>>;
  do {
    chunks += 1;
    last = await adapter.importRawChunk(raw, budgetMs, (progress) => percents.push(progress.percent ?? 0));
    percents.push(last.percent ?? 0);
  } while (!last.done && chunks < 50);
  return { last, chunks, percents };
}

describe('TFVC detection', () => {
  const adapter = tfvcAdapter();

  it('offers the TFVC projects of a collection as choices, and finds a single one or a named one', async () => {
    expect(await adapter.detect(access(two.collectionUrl))).toEqual({
      kind: 'multiple',
      choices: [
        { vcs: 'tfvc', humanName: 'Alpha', tfvcProject: 'Alpha' },
        { vcs: 'tfvc', humanName: 'Beta', tfvcProject: 'Beta' },
      ],
    });
    expect(await adapter.detect(access(one.collectionUrl))).toEqual({ kind: 'found', vcs: 'tfvc' });
    expect(await adapter.detect(access(`${two.collectionUrl}/Beta`))).toEqual({ kind: 'found', vcs: 'tfvc' });
    expect(await adapter.detect(access(two.collectionUrl, { tfvcProject: 'beta' }))).toEqual({
      kind: 'found',
      vcs: 'tfvc',
    });
    // A Git-only project of the collection is not TFVC.
    expect(await adapter.detect(access(`${two.collectionUrl}/Gamma`))).toEqual({ kind: 'nothing' });
  });

  it('needs credentials on 401 and on a 203 sign-in page; a PAT opens the collection', async () => {
    expect(await adapter.detect(access(locked.collectionUrl))).toEqual({ kind: 'needs_auth' });
    expect(await adapter.detect(access(signIn.collectionUrl))).toEqual({ kind: 'needs_auth' });
    expect(await adapter.detect(access(signIn.collectionUrl, withPat()))).toEqual({
      kind: 'found',
      vcs: 'tfvc',
    });
    expect((await adapter.detect(access(locked.collectionUrl, withPat()))).kind).toBe('multiple');
  });

  it('finds nothing at a Git server, a web page, an unknown API path or a closed port', async () => {
    expect(await adapter.detect(access(`${gitServer.url}/some.git`))).toEqual({ kind: 'nothing' });
    expect(await adapter.detect(access(`${gitServer.url}/page`))).toEqual({ kind: 'nothing' });
    expect(await adapter.detect(access(`${two.url}/elsewhere`))).toEqual({ kind: 'nothing' });
    expect(await adapter.detect(access('http://127.0.0.1:9/tfs'))).toEqual({ kind: 'nothing' });
  });

  it('runs last in detectOrigin, after Git and Mercurial found nothing', async () => {
    const candidates = detectionCandidates();
    expect(candidates.at(-1)?.vcs).toBe('tfvc');
    expect(await detectOrigin(access(one.collectionUrl), candidates)).toEqual({ kind: 'found', vcs: 'tfvc' });
  });
});

describe('TFVC raw import', () => {
  it('replays every changeset of the project into main, paging changesets and changes', async () => {
    const adapter = tfvcAdapter({ pageSize: 2 });
    const raw = await job(two.collectionUrl, { tfvcProject: 'Alpha' });
    const before = two.requests.length;
    const { last } = await importAll(adapter, raw, 600_000);
    expect(last).toEqual({ done: true, commitCount: 8, percent: 100 });

    const repo = rawRepositoryPath(raw.workDir);
    expect((await git(repo, 'symbolic-ref', 'HEAD')).trim()).toBe('refs/heads/main');
    expect((await git(repo, 'for-each-ref', '--format=%(refname)')).trim()).toBe('refs/heads/main');
    const files = (await git(repo, '-c', 'core.quotePath=false', 'ls-tree', '-r', '--name-only', 'main'))
      .trim()
      .split('\n');
    expect(files).toEqual(Object.keys(ALPHA_FINAL_TREE).sort());
    for (const [path, content] of Object.entries(ALPHA_FINAL_TREE))
      expect(await gitBytes(repo, 'show', `main:${path}`)).toEqual(Buffer.from(content));

    const log = (await git(repo, 'log', '--reverse', '--format=%an <%ae>|%cn <%ce>|%at|%s', 'main'))
      .trim()
      .split('\n');
    const ada = 'Ada Lovelace <ada@example.com>';
    const bob = 'Bob Builder <bob@tfvc.invalid>';
    const at = (iso: string) => Date.parse(iso) / 1000;
    expect(log).toEqual([
      `${ada}|${ada}|${at('2024-01-01T09:00:00Z')}|Created team project folder $/Alpha via the Team Project Creation Wizard`,
      `${ada}|${ada}|${at('2024-01-02T10:00:00Z')}|Initial import`,
      `${bob}|${bob}|${at('2024-01-03T11:30:00Z')}|Changeset 4`,
      `${ada}|${bob}|${at('2024-01-05T08:15:00Z')}|Rename notes, drop the readme`,
      `${bob}|${bob}|${at('2024-01-06T12:00:00Z')}|Rename util to helpers and rewrite it`,
      `${ada}|${ada}|${at('2024-01-07T13:00:00Z')}|Remove docs, add the logo`,
      `${bob}|${bob}|${at('2024-01-08T14:00:00Z')}|Unicode`,
      `${ada}|${ada}|${at('2024-01-09T15:00:00Z')}|Move lib to core`,
    ]);
    // The long comment is whole (lists cut it at 80, the changeset alone at 2,000), with LF line ends.
    expect(TFVC_LONG_COMMENT.length).toBeGreaterThan(2000);
    expect(await git(repo, 'log', '-1', '--format=%B', 'main~3')).toBe(
      `${TFVC_LONG_COMMENT.replace(/\r\n/g, '\n')}\n\n`,
    );
    // The history in between: the rename kept content, the deleted folder is gone after changeset 8.
    expect(await git(repo, 'show', 'main~4:docs/guide.txt')).toBe('notes\r\n');
    expect(await git(repo, 'ls-tree', '--name-only', 'main~2')).not.toContain('docs');
    // A file moved out of $/Alpha (listed as a rename only, at its new path) leaves the tree.
    expect(await git(repo, 'show', 'main~1:tools/build.cmd')).toBe('@echo build\r\n');

    const seen = two.requests.slice(before);
    expect(seen.some((line) => /\/Alpha\/_apis\/tfvc\/changesets\?.*\$skip=4/.test(line))).toBe(true);
    expect(seen.some((line) => /_apis\/tfvc\/changesets\/3\/changes\?.*continuationToken=/.test(line))).toBe(
      true,
    );
    expect(seen.some((line) => /_apis\/tfvc\/changesets\/7\?/.test(line))).toBe(true);
    // Beta's changesets are not replayed.
    expect(seen.some((line) => /changesets\/[25]\//.test(line))).toBe(false);
    onePass = (await git(repo, 'rev-parse', 'main')).trim();

    // A finished import does nothing more.
    expect(await adapter.importRawChunk(raw, 600_000, () => undefined)).toEqual(last);
  });

  it('with a tiny budget replays one changeset per chunk, to the same commit ids', async () => {
    const adapter = tfvcAdapter({ pageSize: 2 });
    const raw = await job(two.collectionUrl, { tfvcProject: 'Alpha' });
    const { last, chunks, percents } = await importAll(adapter, raw, 0);
    expect(last).toEqual({ done: true, commitCount: 8, percent: 100 });
    expect(chunks).toBe(8);
    expect(percents.every((value, i) => i === 0 || value >= (percents[i - 1] ?? 0))).toBe(true);
    expect(percents.some((value) => value > 0 && value < 100)).toBe(true);
    expect((await git(rawRepositoryPath(raw.workDir), 'rev-parse', 'main')).trim()).toBe(onePass);
  });

  it('lists the authors with the identities raw.git holds and their TFVC unique names', async () => {
    // The default page size (100) against a server that sends at most 3 a page.
    const adapter = tfvcAdapter();
    const raw = await job(two.collectionUrl, { tfvcProject: 'Alpha' });
    expect(await adapter.importRawChunk(raw, 600_000, () => undefined)).toMatchObject({ commitCount: 8 });
    expect((await git(rawRepositoryPath(raw.workDir), 'rev-parse', 'main')).trim()).toBe(onePass);
    const authors = await adapter.authors(raw);
    expect([...authors].sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      {
        remoteId: 'Ada Lovelace <ada@example.com>',
        remoteName: 'ada@example.com',
        name: 'Ada Lovelace',
        email: 'ada@example.com',
      },
      {
        remoteId: 'Bob Builder <bob@tfvc.invalid>',
        remoteName: 'CONTOSO\\bob',
        name: 'Bob Builder',
        email: 'bob@tfvc.invalid',
      },
    ]);
  });

  it('imports the chosen project, or the project the URL names', async () => {
    const adapter = tfvcAdapter();
    const chosen = await job(two.collectionUrl, {
      choice: { vcs: 'tfvc', humanName: 'Beta', tfvcProject: 'Beta' },
    });
    expect(await adapter.importRawChunk(chosen, 600_000, () => undefined)).toEqual({
      done: true,
      commitCount: 2,
      percent: 100,
    });
    const named = await job(`${two.collectionUrl}/Beta`);
    await adapter.importRawChunk(named, 600_000, () => undefined);
    expect(await git(rawRepositoryPath(named.workDir), 'show', 'main:beta.txt')).toBe('beta\nmore\n');
    expect(await git(rawRepositoryPath(chosen.workDir), 'rev-parse', 'main')).toBe(
      await git(rawRepositoryPath(named.workDir), 'rev-parse', 'main'),
    );
  });

  it('fails readably: several projects and none chosen, a missing project, not TFVC, unreachable, limits', async () => {
    const adapter = tfvcAdapter();
    const fail = async (raw: RawJob, options = adapter) =>
      (await options.importRawChunk(raw, 600_000, () => undefined).catch((error: unknown) => error)) as Error;
    const several = await fail(await job(two.collectionUrl));
    expect(several).toBeInstanceOf(OriginFailed);
    expect(several.message).toMatch(/several TFVC projects/);
    expect((await fail(await job(two.collectionUrl, { tfvcProject: 'Nope' }))).message).toMatch(
      /has no project named Nope/,
    );
    expect((await fail(await job(`${gitServer.url}/some.git`))).message).toMatch(/No TFVC project was found/);
    const closed = await fail(await job('http://127.0.0.1:9/tfs/DefaultCollection'));
    expect(closed).toBeInstanceOf(OriginFailed);
    expect(closed.message).toMatch(/127\.0\.0\.1/);
    const tooMany = await fail(await job(one.collectionUrl), tfvcAdapter({ maxObjects: 3 }));
    expect(tooMany.message).toBe('The repository has more objects than the import limit');
    const big = await serveTfvc({
      projects: [
        {
          name: 'Big',
          changesets: [
            {
              id: 1,
              author: { displayName: 'X', uniqueName: 'x@example.com' },
              date: '2024-01-01T00:00:00Z',
              comment: 'big',
              changes: [{ path: 'big.bin', changeType: 'add', content: Buffer.alloc(2 * 1024 * 1024, 7) }],
            },
          ],
        },
      ],
    });
    try {
      const tooLarge = await fail(await job(big.collectionUrl), tfvcAdapter({ maxBytes: 1024 * 1024 }));
      expect(tooLarge).toBeInstanceOf(OriginFailed);
      expect(tooLarge.message).toBe('The repository is larger than the import limit of 1 MiB');
    } finally {
      await big.close();
    }
  });

  it("refuses a server that answers an item's JSON metadata for its content, naming the item and changeset", async () => {
    const [alpha] = tfvcHistory();
    const metadataOnly = await serveTfvc({ projects: alpha ? [alpha] : [], metadataOnly: true });
    try {
      const raw = await job(metadataOnly.collectionUrl);
      const error = (await tfvcAdapter()
        .importRawChunk(raw, 600_000, () => undefined)
        .catch((caught: unknown) => caught)) as Error;
      expect(error).toBeInstanceOf(OriginFailed);
      expect(error.message).toMatch(/sent JSON instead of the content of \$\/Alpha\/\S+ at changeset 3/);
      expect(error.message).not.toContain(raw.workDir);
    } finally {
      await metadataOnly.close();
    }
  });
});

describe('TFVC throttling', () => {
  it('waits as Retry-After says and goes on, to the same history', async () => {
    const throttled = await serveTfvc({ projects: tfvcHistory(), throttleEvery: 3 });
    try {
      const raw = await job(throttled.collectionUrl, { tfvcProject: 'Alpha' });
      expect(await tfvcAdapter().importRawChunk(raw, 600_000, () => undefined)).toMatchObject({ done: true });
      expect((await git(rawRepositoryPath(raw.workDir), 'rev-parse', 'main')).trim()).toBe(onePass);
      expect(throttled.requests.length).toBeGreaterThan(6);
    } finally {
      await throttled.close();
    }
  });
});

describe('TFVC credentials', () => {
  it('imports with the PAT; without it or with a wrong one fails with OriginAuthFailed, never showing it', async () => {
    const adapter = tfvcAdapter();
    const good = await job(locked.collectionUrl, { tfvcProject: 'Alpha', ...withPat() });
    expect(await adapter.importRawChunk(good, 600_000, () => undefined)).toMatchObject({
      done: true,
      commitCount: 8,
    });

    const none = adapter.importRawChunk(
      await job(locked.collectionUrl, { tfvcProject: 'Alpha' }),
      600_000,
      () => undefined,
    );
    await expect(none).rejects.toThrow(OriginAuthFailed);
    await expect(none).rejects.toThrow(/requires a username and password/);

    const wrong = 'wrong-Pat-77';
    for (const server of [locked, signIn]) {
      const error = (await adapter
        .importRawChunk(
          await job(server.collectionUrl, { tfvcProject: 'Alpha', ...withPat(wrong) }),
          600_000,
          () => undefined,
        )
        .catch((caught: unknown) => caught)) as Error;
      expect(error).toBeInstanceOf(OriginAuthFailed);
      expect(error.message).toBe('The origin refused the username and password');
      expect(`${error.message}${error.stack}`).not.toContain(wrong);
      expect(`${error.message}${error.stack}`).not.toContain(PAT);
    }
  });
});

describe('TFVC and the network guard', () => {
  const { resolve, dial, dialled } = stubNetwork({
    'tfvc.example': ['127.0.0.1'],
    'private.example': ['10.0.0.1'],
  });

  it('reaches the origin only through the guard, and makes emails from a named host', async () => {
    const adapter = tfvcAdapter({ resolve, dial });
    const raw = await job(`http://tfvc.example:${one.port}/DefaultCollection`);
    expect(await adapter.importRawChunk(raw, 600_000, () => undefined)).toMatchObject({
      done: true,
      commitCount: 8,
    });
    expect(dialled.some((target) => target.host === 'tfvc.example')).toBe(true);
    expect(await git(rawRepositoryPath(raw.workDir), 'log', '--format=%ae', 'main')).toContain(
      'bob@tfvc.example',
    );
  });

  it('refuses a forbidden address before any packet, in detection and import', async () => {
    const adapter = tfvcAdapter({ resolve, dial });
    const before = dialled.length;
    await expect(adapter.detect(access('http://private.example/DefaultCollection'))).rejects.toThrow(
      ForbiddenAddress,
    );
    await expect(
      adapter.importRawChunk(await job('http://private.example/DefaultCollection'), 600_000, () => undefined),
    ).rejects.toThrow(ForbiddenAddress);
    await expect(adapter.detect(access('http://10.1.2.3/DefaultCollection'))).rejects.toThrow(
      ForbiddenAddress,
    );
    expect(dialled.slice(before)).toEqual([]);
  });
});
