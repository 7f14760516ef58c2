import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareHome, runGit } from '#vcs/git-command';
import { type GitJob, publishedHistory, rewriteHistory } from '#vcs/history';
import { hostedRepositoryPath } from '#vcs/hosted-paths';
import { localLfsStore } from '#vcs/lfs-store';
import { directorySize } from '#vcs/limits';
import { objectTotal } from '#vcs/object-database';
import { OriginFailed } from '#vcs/origin';
import { publish } from '#vcs/publish';

/**
 * The history and push steps under the import's limits and git's object checks, through their
 * public functions on real repositories made by `git fast-import`.
 */

const MiB = 1024 * 1024;
/** Three files of 12 MiB of repeated text: a few dozen KiB in Git, 36 MiB as Git LFS objects. */
const LARGE_FILES = 3;
const LARGE_BYTES = 12 * MiB;
const LIMIT = 8 * MiB;
const THRESHOLD = MiB;

let root: string;
let job: GitJob;
let serial = 0;
const fresh = (name: string) => join(root, `${name}-${++serial}`);

const git = async (cwd: string, ...args: string[]) =>
  (await runGit(args, { cwd, home: job.home, transport: 'local', timeoutMs: 60_000 })).toString('utf8');

/** A bare repository from a `git fast-import` stream (one commit per list of files, on main). */
async function importRepository(commits: readonly (readonly [path: string, content: Buffer])[][]) {
  const dir = fresh('origin');
  await runGit(['init', '--bare', '--quiet', dir], {
    cwd: root,
    home: job.home,
    transport: 'local',
    timeoutMs: 60_000,
  });
  const parts: Buffer[] = [];
  commits.forEach((files, index) => {
    parts.push(
      Buffer.from(
        `commit refs/heads/main\nmark :${index + 1}\ncommitter Ada <ada@example.com> ${1_500_000_000 + index} +0000\ndata 7\ncommit\n`,
      ),
    );
    for (const [path, content] of files) {
      parts.push(
        Buffer.from(`M 100644 inline ${path}\ndata ${content.length}\n`),
        content,
        Buffer.from('\n'),
      );
    }
    parts.push(Buffer.from('\n'));
  });
  await runGit(['fast-import', '--quiet'], {
    cwd: dir,
    home: job.home,
    transport: 'local',
    timeoutMs: 60_000,
    input: Buffer.concat(parts),
  });
  return dir;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'import-safety-'));
  const home = join(root, 'home');
  await prepareHome(home, []);
  job = { home, timeoutMs: 60_000 };
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('the import limits after the raw step', () => {
  let origin: string;

  beforeAll(async () => {
    const readme = [['README.md', Buffer.from('# small\n')] as const];
    const large = Array.from({ length: LARGE_FILES }, (_, n) => [
      [`media/${n}.bin`, Buffer.alloc(LARGE_BYTES, `large file ${n} `)] as const,
    ]);
    origin = await importRepository([readme, ...large]);
  });

  it('fails the LFS rewrite of a small origin that expands past IMPORT_MAX_BYTES, and leaves nothing to publish', async () => {
    expect(await directorySize(origin)).toBeLessThan(MiB);
    const out = fresh('out');

    const rewriting = rewriteHistory(
      origin,
      out,
      { authors: [], lfs: 'opt_in', thresholdBytes: THRESHOLD, maxBytes: LIMIT },
      job,
    );

    await expect(rewriting).rejects.toThrow(OriginFailed);
    await expect(rewriting).rejects.toThrow('The repository is larger than the import limit of 8 MiB');
    expect(await directorySize(out)).toBe(0);
  });

  it('refuses to publish Git and LFS objects over IMPORT_MAX_BYTES before writing anything', async () => {
    const out = fresh('out');
    await rewriteHistory(origin, out, { authors: [], lfs: 'opt_in', thresholdBytes: THRESHOLD }, job);
    const reposDir = fresh('repositories');
    const hosted = hostedRepositoryPath(reposDir, 'octo', 'small');

    const publishing = publish(
      out,
      hosted,
      {
        budgetMs: 60_000,
        lfs: { store: localLfsStore(reposDir), owner: 'octo', repo: 'small' },
        maxBytes: LIMIT,
      },
      job,
    );

    await expect(publishing).rejects.toThrow('The repository is larger than the import limit of 8 MiB');
    expect(await directorySize(reposDir)).toBe(0);
  });

  it('fails a rewrite that writes more objects than IMPORT_MAX_OBJECTS although the raw history has fewer', async () => {
    const out = fresh('out');
    const maxObjects = await objectTotal(origin);

    const rewriting = rewriteHistory(
      origin,
      out,
      { authors: [], lfs: 'opt_in', thresholdBytes: THRESHOLD, maxBytes: 100 * MiB, maxObjects },
      job,
    );

    await expect(rewriting).rejects.toThrow('The repository has more objects than the import limit');
    expect(await directorySize(out)).toBe(0);
  });
});

describe("git's object checks on an imported history", () => {
  const content = Buffer.from('[core]\n\thooksPath = /tmp\n');

  it.each([
    ['..', '..', 'hasDotdot'],
    ['.GIT/config', '.GIT', 'hasDotgit'],
    ['docs/.git/config', 'docs/.git', 'hasDotgit'],
    ['.g\u200cit/config', '.g\u200cit', 'hasDotgit'],
    ['GIT~1/config', 'GIT~1', 'hasDotgit'],
  ])(
    'leaves out a tree entry %s (%s, %s), naming the commit and path, and imports the rest',
    async (file) => {
      const origin = await importRepository([[['README.md', Buffer.from('fine\n')]], [[file, content]]]);
      const commit = (await git(origin, 'rev-parse', 'main')).trim();
      const out = fresh('out');

      const result = await rewriteHistory(
        origin,
        out,
        { authors: [], lfs: 'none', thresholdBytes: THRESHOLD },
        job,
      );

      expect(result.unstorablePaths).toEqual([expect.objectContaining({ commit, path: file })]);
      expect((await git(out, 'ls-tree', '-r', '--name-only', 'main')).split('\n').filter(Boolean)).toEqual([
        'README.md',
      ]);
      await git(out, 'fsck', '--strict', '--no-progress');
    },
  );

  it('imports a history with zero-padded tree modes, which some early Git tools wrote', async () => {
    const origin = await importRepository([[['dir/file.txt', Buffer.from('old\n')]]]);
    const tree = (await git(origin, 'rev-parse', 'main^{tree}')).trim();
    const inner = (await git(origin, 'rev-parse', 'main:dir')).trim();
    // `040000` where Git writes `40000`: a raw tree object, as an old tool left it.
    const padded = Buffer.concat([Buffer.from('040000 dir\0'), Buffer.from(inner, 'hex')]);
    const paddedTree = (
      await runGit(['hash-object', '-t', 'tree', '--literally', '-w', '--stdin'], {
        cwd: origin,
        home: job.home,
        transport: 'local',
        timeoutMs: 60_000,
        input: padded,
      })
    )
      .toString('utf8')
      .trim();
    expect(paddedTree).not.toBe(tree);
    const commit = (
      await git(
        origin,
        '-c',
        'user.name=Old Tool',
        '-c',
        'user.email=old@example.com',
        'commit-tree',
        paddedTree,
        '-m',
        'padded',
      )
    ).trim();
    await git(origin, 'update-ref', 'refs/heads/main', commit);

    const out = fresh('out');
    const { rewritten } = await rewriteHistory(
      origin,
      out,
      { authors: [], lfs: 'none', thresholdBytes: THRESHOLD },
      job,
    );

    expect((await git(publishedHistory(origin, out, rewritten), 'rev-parse', 'main')).trim()).toBe(commit);
  });
});
