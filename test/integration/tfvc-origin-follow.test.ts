import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tfvcHistory } from '#local/tfvc-alpha';
import { serveTfvc, type TfvcProjectSpec, type TfvcServer } from '#local/tfvc-origin';
import { LOOPBACK_ONLY } from '#test/raw-jobs';
import { type RawJob, rawRepositoryPath } from '#vcs/origin';
import { tfvcAdapter } from '#vcs/tfvc/adapter';

/**
 * The TFVC adapter's `reopen` against the stand-in, below the workflow: a directory reopened (twice,
 * as a retried step may) and moved to another path continues, one changeset a chunk, to the raw
 * history a fresh import of the grown project writes, with empty folders kept.
 */

const exec = promisify(execFile);
const git = async (cwd: string, ...args: string[]) =>
  (await exec('git', args, { cwd, env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd } }))
    .stdout;

let work: string;
let origin: TfvcServer;
const [ALPHA, BETA] = tfvcHistory() as [TfvcProjectSpec, TfvcProjectSpec];
const upTo = (last: number): TfvcProjectSpec => ({
  ...ALPHA,
  changesets: ALPHA.changesets.filter((changeset) => changeset.id <= last),
});

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'tfvc-follow-'));
  origin = await serveTfvc({ projects: [upTo(6), BETA], maxPage: 3 });
});
afterAll(async () => {
  await origin?.close();
  await rm(work, { recursive: true, force: true });
});

// One changeset a batch and no time budget: every chunk replays one changeset.
const adapter = tfvcAdapter({ batchBytes: 1 });
const jobAt = (workDir: string): RawJob => ({
  url: origin.collectionUrl,
  allowedAddresses: LOOPBACK_ONLY,
  tfvcProject: 'Alpha',
  workDir,
  choices: { keepEmptyDirectories: true, keepDeletedRefs: true },
});

async function importAll(job: RawJob): Promise<number> {
  let chunks = 0;
  for (;;) {
    chunks += 1;
    if ((await adapter.importRawChunk(job, 0, () => {})).done) return chunks;
  }
}

const rawState = async (workDir: string) => {
  const repo = rawRepositoryPath(workDir);
  return {
    refs: await git(repo, 'for-each-ref', '--format=%(objectname) %(refname)'),
    revisions: await readFile(join(repo, 'origin-revisions'), 'utf8'),
  };
};

describe('reopening a TFVC import to follow the origin', () => {
  it('continues a reopened, moved directory to the raw history of a fresh import', async () => {
    const first = join(work, 'attempt-1');
    expect(await importAll(jobAt(first))).toBe(4);
    await adapter.reopen(first);
    await adapter.reopen(first);
    // As the worker's carryOver does: what the reopen kept moves to the next attempt's directory.
    const second = join(work, 'attempt-2');
    await rename(first, second).catch(() => {});

    origin.replaceHistory([ALPHA, BETA]);
    const seen = origin.requests.length;
    // Changesets 7, 8, 9, 10: one chunk each.
    expect(await importAll(jobAt(second))).toBe(4);
    expect(origin.requests.slice(seen).some((line) => /changesets\/[346]\/changes/.test(line))).toBe(false);

    const fresh = join(work, 'fresh');
    await importAll(jobAt(fresh));
    const synced = await rawState(second);
    expect(synced).toEqual(await rawState(fresh));
    expect(
      synced.revisions
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split(' ')[0]),
    ).toEqual(['1', '3', '4', '6', '7', '8', '9', '10']);
    // The folder emptied by changeset 10 holds its placeholder, as in the fresh import.
    expect(await git(rawRepositoryPath(second), 'ls-tree', '--name-only', 'main', 'tools/')).toBe(
      'tools/.gitignore\n',
    );
  });

  it('starts afresh from a directory that holds no replayed changeset', async () => {
    const empty = await mkdtemp(join(work, 'nothing-'));
    await adapter.reopen(empty);
    await expect(stat(empty)).rejects.toThrow();
  });
});
