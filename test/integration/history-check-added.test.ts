import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixtureRepository } from '#local/git-fixtures';
import { prepareHome, runGit } from '#vcs/git-command';
import type { GitJob } from '#vcs/history';
import { CHECKED_TIPS, checkHistory } from '#vcs/history-check';
import { OriginFailed } from '#vcs/origin';

/**
 * A raw history not checked as it arrived (a conversion's) is checked whole once; after a clean
 * pass, a sync's pass reads only the objects it added (`history-check.ts`), and finds in them what
 * the whole check finds: an entry the rewrite drops, an object git refuses (in the same words).
 */

let root: string;
let job: GitJob;
let serial = 0;

const git = async (cwd: string, args: string[], input?: string) =>
  (await runGit(args, { cwd, home: job.home, transport: 'local', timeoutMs: 60_000, input })).toString(
    'utf8',
  );

/**
 * A commit on `main` of `repo` whose tree is `entries` (name → file text), by `identity` as its
 * author and committer; written as given (`--literally`), so that it may be one git refuses.
 */
async function commitOnMain(
  repo: string,
  entries: Record<string, string>,
  identity = 'Ada <ada@example.com>',
) {
  const lines: string[] = [];
  for (const [name, text] of Object.entries(entries)) {
    const blob = (await git(repo, ['hash-object', '-w', '--stdin'], text)).trim();
    lines.push(`100644 blob ${blob}\t${name}`);
  }
  const tree = (await git(repo, ['mktree'], `${lines.join('\n')}\n`)).trim();
  const parent = (await git(repo, ['rev-parse', 'refs/heads/main'])).trim();
  const text = [
    `tree ${tree}`,
    `parent ${parent}`,
    `author ${identity} 1700000000 +0000`,
    `committer ${identity} 1700000000 +0000`,
    '',
    'added',
    '',
  ].join('\n');
  const commit = (
    await git(repo, ['hash-object', '-t', 'commit', '-w', '--literally', '--stdin'], text)
  ).trim();
  await git(repo, ['update-ref', 'refs/heads/main', commit]);
  return commit;
}

/** An identity git refuses (`missingEmail`). */
const WITHOUT_EMAIL = 'Ada';

async function rawHistory(): Promise<string> {
  const repo = join(root, `raw-${++serial}.git`);
  await makeFixtureRepository(repo, { commits: 4, branches: 1, annotatedTags: 1 });
  await prepareHome(job.home, [repo]);
  return repo;
}

const checkedTips = async (repo: string) =>
  (await readFile(join(repo, CHECKED_TIPS), 'utf8').catch(() => '')).split('\n').filter(Boolean);

beforeAll(async () => {
  // Another device than /tmp, where the check's scratch repository is: as EFS is in AWS.
  root = await mkdtemp(join('/dev/shm', 'history-check-added-'));
  expect((await stat(root)).dev).not.toBe((await stat(tmpdir())).dev);
  job = { home: join(root, 'home'), timeoutMs: 60_000 };
  await prepareHome(job.home, []);
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("a raw history's object checks, pass after pass", () => {
  it('keeps the tips of a clean pass, and the next pass reads only what they do not reach', async () => {
    const repo = await rawHistory();
    expect(await checkHistory(repo, job, true)).toEqual({ any: false, slashNamed: [] });
    const tips = (await git(repo, ['for-each-ref', '--format=%(objectname)', 'refs/heads/', 'refs/tags/']))
      .split('\n')
      .filter(Boolean);
    expect((await checkedTips(repo)).sort()).toEqual([...new Set(tips)].sort());

    // An object git refuses under a tip a pass took as checked: the next pass does not read it
    // again (what it added passes), and the whole check still refuses it.
    const refused = await commitOnMain(repo, { 'a.txt': 'a\n' }, WITHOUT_EMAIL);
    await writeFile(join(repo, CHECKED_TIPS), `${refused}\n`);
    await commitOnMain(repo, { 'b.txt': 'b\n' });
    expect(await checkHistory(repo, job, true)).toEqual({ any: false, slashNamed: [] });
    await rm(join(repo, CHECKED_TIPS));
    await expect(checkHistory(repo, job, true)).rejects.toThrow(
      `Git refuses commit ${refused} of the history`,
    );
  });

  it('finds in the added objects an entry the rewrite drops, as the whole check does, and keeps no tips then', async () => {
    const repo = await rawHistory();
    await checkHistory(repo, job, true);
    await commitOnMain(repo, { '.git': 'x\n', 'ok.txt': 'ok\n' });
    expect(await checkHistory(repo, job, true)).toEqual({ any: true, slashNamed: [] });
    expect(await checkedTips(repo)).toEqual([]);
    // The next pass is whole again, and says the same.
    expect(await checkHistory(repo, job, true)).toEqual({ any: true, slashNamed: [] });
  });

  it('refuses an added object git refuses, in the words of the whole check', async () => {
    const repo = await rawHistory();
    await checkHistory(repo, job, true);
    const bad = await commitOnMain(repo, { 'c.txt': 'c\n' }, WITHOUT_EMAIL);
    const error = await checkHistory(repo, job, true).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OriginFailed);
    expect((error as Error).message).toMatch(new RegExp(`^Git refuses commit ${bad} of the history \\(`));
  });
});
