import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FABRIKAM,
  FABRIKAM_EMPTY_FOLDERS,
  FABRIKAM_FILES,
  fabrikamProjects,
  fabrikamShelvesets,
} from '#local/tfvc-fabrikam';
import { serveTfvc, type TfvcServer } from '#local/tfvc-origin';
import { rawJobs } from '#test/raw-jobs';
import { loadFindings } from '#vcs/findings';
import { OriginFailed, type RawJob, rawRepositoryPath } from '#vcs/origin';
import { tfvcAdapter } from '#vcs/tfvc/adapter';

/*
 * What a TFVC import reports it could not carry over (labels, shelvesets, branch relations, empty
 * folders), read from the specification's endpoints of a stand-in that pages every list (at most
 * 2 a page), and the owner's choice to keep empty folders; then failures that name the step, the
 * changeset, the path and the server's own words.
 */

const exec = promisify(execFile);
const git = async (cwd: string, ...args: string[]) =>
  (await exec('git', args, { cwd, env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd } }))
    .stdout;
const filesAt = async (raw: RawJob, rev: string) =>
  (await git(rawRepositoryPath(raw.workDir), 'ls-tree', '-r', '--name-only', rev)).trim().split('\n');

const PAT = 'pat-Fabrikam-77-never-shown';
let work: string;
let server: TfvcServer;
let failing: TfvcServer;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'tfvc-findings-'));
  [server, failing] = await Promise.all([
    serveTfvc({ projects: fabrikamProjects(), shelvesets: fabrikamShelvesets(), maxPage: 2 }),
    serveTfvc({
      projects: fabrikamProjects(),
      pat: PAT,
      failContent: [
        {
          path: `$/${FABRIKAM}/AuthSample/Code/AuthSample.cs`,
          changeset: 2,
          status: 500,
          typeKey: 'TeamFoundationServiceException',
          message: `TF400898: An Internal Error Occurred. Activity Id: 5f0c2d9e-1b7a-4c3e-9d21-7f3a8e6b4c10. Content store http://anything:${PAT}@store.internal/blob refused the read.`,
        },
      ],
    }),
  ]);
});

afterAll(async () => {
  await Promise.all([server?.close(), failing?.close()]);
  await rm(work, { recursive: true, force: true });
});

const job = rawJobs(() => work);
const fabrikam = (extra: Partial<RawJob> = {}) =>
  job(server.collectionUrl, { tfvcProject: FABRIKAM, ...extra });

async function importAll(raw: RawJob, budgetMs = 600_000) {
  const adapter = tfvcAdapter({ pageSize: 2 });
  let chunk: Awaited<ReturnType<typeof adapter.importRawChunk>>;
  let chunks = 0;
  do chunk = await adapter.importRawChunk(raw, budgetMs, () => undefined);
  while (!chunk.done && ++chunks < 50);
  return chunk;
}

describe('the TFVC import report', () => {
  it("lists the project's labels, its shelvesets and its live branches with their parents", async () => {
    const raw = await fabrikam();
    expect(await importAll(raw)).toMatchObject({ done: true, commitCount: 6 });
    const findings = await loadFindings(raw.workDir);

    const chuck = 'fabrikamfiber3@hotmail.com';
    expect(findings.tfvc_labels).toEqual({
      count: 3,
      listed: [
        {
          name: 'Another label',
          owner: chuck,
          scope: `$/${FABRIKAM}/AuthSample`,
          modified_date: '2014-03-24T19:10:53.22Z',
        },
        {
          name: 'That label',
          owner: chuck,
          scope: `$/${FABRIKAM}`,
          modified_date: '2014-03-24T18:56:32.097Z',
        },
        {
          name: 'This label',
          owner: chuck,
          scope: `$/${FABRIKAM}`,
          modified_date: '2014-03-24T18:56:21.77Z',
        },
      ],
    });
    // `Doc updates` changes only $/Other.
    expect(findings.tfvc_shelvesets).toEqual({
      count: 3,
      listed: [
        {
          name: 'My first shelveset',
          owner: 'fabrikamfiber16@hotmail.com',
          created_date: '2014-07-18T03:37:52.277Z',
        },
        {
          name: 'More changes',
          owner: 'fabrikamfiber16@hotmail.com',
          created_date: '2014-07-18T03:29:45.91Z',
        },
        { name: 'Set this aside for now', owner: chuck, created_date: '2014-03-24T20:32:25.37Z' },
      ],
    });
    // The deleted AuthSample+Special is not listed (its folder is not in main either).
    expect(findings.tfvc_branches).toEqual({
      count: 2,
      listed: [
        { path: `$/${FABRIKAM}/AuthSample`, parent: null, folder: 'AuthSample' },
        {
          path: `$/${FABRIKAM}/AuthSample-dev`,
          parent: `$/${FABRIKAM}/AuthSample`,
          folder: 'AuthSample-dev',
        },
      ],
    });
    // TFVC always has an author (the server sets it at check-in): the kind is not looked for.
    expect(findings.authorless_commits).toBeUndefined();
    // Every list was paged (at most 2 a page), shelvesets collection-wide.
    expect(server.requests.some((line) => /\/_apis\/tfvc\/labels\?.*\$skip=2/.test(line))).toBe(true);
    expect(
      server.requests.some((line) => /\/DefaultCollection\/_apis\/tfvc\/shelvesets\?.*\$skip=2/.test(line)),
    ).toBe(true);
  });

  it('lists the folders empty at the tip, and by default leaves them out of main', async () => {
    const raw = await fabrikam();
    await importAll(raw);
    expect(await filesAt(raw, 'main')).toEqual(FABRIKAM_FILES);
    expect((await loadFindings(raw.workDir)).empty_directories).toEqual({
      count: FABRIKAM_EMPTY_FOLDERS.length,
      listed: FABRIKAM_EMPTY_FOLDERS.map((path) => ({ path, branch: 'main', kept: false })),
    });
  });

  it('keeps each empty folder with an empty .gitkeep when the owner asks, through the whole history', async () => {
    const choices = { keepEmptyDirectories: true, keepDeletedRefs: true };
    const raw = await fabrikam({ choices });
    await importAll(raw);
    const placeholders = FABRIKAM_EMPTY_FOLDERS.map((path) => `${path}/.gitkeep`);
    expect(await filesAt(raw, 'main')).toEqual([...FABRIKAM_FILES, ...placeholders].sort());
    expect(await git(rawRepositoryPath(raw.workDir), 'cat-file', '-s', 'main:Tools/.gitkeep')).toBe('0\n');
    // Changeset 2: the folders added empty; Properties loses its placeholder at 4, Docs is renamed at 5.
    expect(await filesAt(raw, 'main~4')).toEqual(
      [
        'Assets/Icons/.gitkeep',
        'AuthSample/AuthSample.sln',
        'AuthSample/Code/AuthSample.cs',
        'AuthSample/Code/Properties/.gitkeep',
        'AuthSample/Docs/.gitkeep',
        'Tools/build.cmd',
      ].sort(),
    );
    expect(await filesAt(raw, 'main~2')).not.toContain('AuthSample/Code/Properties/.gitkeep');
    expect(await filesAt(raw, 'main~1')).toContain('AuthSample/Documentation/.gitkeep');
    expect((await loadFindings(raw.workDir)).empty_directories?.listed).toEqual(
      FABRIKAM_EMPTY_FOLDERS.map((path) => ({ path, branch: 'main', kept: true })),
    );

    // One changeset per chunk: the folders survive between chunks, to the same commits.
    const chunked = await fabrikam({ choices });
    await importAll(chunked, 0);
    expect(await git(rawRepositoryPath(chunked.workDir), 'rev-parse', 'main')).toBe(
      await git(rawRepositoryPath(raw.workDir), 'rev-parse', 'main'),
    );
  });
});

describe('TFVC failures', () => {
  it("name the step, the changeset, the path and the server's words, without the credentials", async () => {
    const raw = await job(failing.collectionUrl, {
      tfvcProject: FABRIKAM,
      credentials: { username: 'anything', password: PAT },
    });
    const error = (await tfvcAdapter()
      .importRawChunk(raw, 600_000, () => undefined)
      .catch((caught: unknown) => caught)) as Error;
    expect(error).toBeInstanceOf(OriginFailed);
    expect(error.message).toMatch(
      new RegExp(
        `^Reading the content of \\$/${FABRIKAM}/AuthSample/Code/AuthSample\\.cs at changeset 2 failed: the origin answered 500: TF400898: An Internal Error Occurred\\.`,
      ),
    );
    expect(error.message).toContain('http://***@store.internal/blob refused the read.');
    expect(`${error.message}${error.stack}`).not.toContain(PAT);
    expect(error.message).not.toContain(raw.workDir);
    // The findings read before the failure are kept for the report.
    expect((await loadFindings(raw.workDir)).tfvc_branches?.count).toBe(2);
  });
});
