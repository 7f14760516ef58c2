import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitRemoteId } from '#domain/imports';
import { makeFixtureRepository } from '#local/git-fixtures';
import { commitOnMain, objectFiles } from '#test/pack-growth';
import { prepareHome, runGit } from '#vcs/git-command';
import { findLargeFiles, type GitJob, publishedHistory, rewriteHistory } from '#vcs/history';
import { hostedRepositoryPath, lfsObjectPath } from '#vcs/hosted-paths';
import { localLfsStore } from '#vcs/lfs-store';
import { MAX_PACKS } from '#vcs/pack-upkeep';
import { type PublishResult, publish } from '#vcs/publish';

const THRESHOLD = 100_000;
const LARGE = { path: 'media/big.bin', bytes: 300_000 };
const ADA = { name: 'Ada Lovelace', email: 'ada@example.com' };
const ODD = { name: "Zoë # O'Brien (ops)", email: 'zoe+#ops@EXAMPLE.com' };
const GRACE = { name: 'Grace Hopper', email: 'grace@example.com' };

let root: string;
let job: GitJob;
let origin: string;
let reposDir: string;
let serial = 0;

const git = async (cwd: string, ...args: string[]) =>
  (await runGit(args, { cwd, home: job.home, transport: 'local', timeoutMs: 60_000 })).toString('utf8');

/** Every ref with the object it names (tag objects for annotated tags), as git prints it. */
const refsOf = async (dir: string, ...patterns: string[]) =>
  (await git(dir, 'for-each-ref', '--format=%(objectname) %(refname)', ...patterns)).trim().split('\n');

const fresh = (name: string) => join(root, `${name}-${++serial}`);

/**
 * What a `git init --bare` killed part-way leaves: git writes `HEAD` (and its config) before it
 * makes `objects/`, a directory git then refuses as "not a git repository".
 */
async function halfMadeByInit(path: string): Promise<void> {
  await git(root, 'init', '--bare', '--quiet', path);
  await rm(join(path, 'objects'), { recursive: true });
}

/** Calls `publish` until it is done; returns every result and every percent reported. */
async function publishAll(source: string, hosted: string, budgetMs = 60_000, refsPerPush?: number) {
  const results: PublishResult[] = [];
  const percents: number[] = [];
  for (let call = 0; call < 100; call++) {
    const result = await publish(
      source,
      hosted,
      {
        budgetMs,
        refsPerPush,
        onPercent: (p) => percents.push(p),
        lfs: { store: localLfsStore(reposDir), owner: 'octo', repo: 'hello' },
      },
      job,
    );
    results.push(result);
    if (result.done) break;
  }
  return { results, percents };
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'import-history-'));
  const home = join(root, 'home');
  await prepareHome(home, []);
  job = { home, timeoutMs: 60_000 };
  origin = join(root, 'origin.git');
  reposDir = join(root, 'repositories');
  await makeFixtureRepository(origin, {
    commits: 60,
    branches: 3,
    annotatedTags: 4,
    authors: [ADA, ODD, GRACE],
    largeFile: LARGE,
    bytesPerCommit: 2_000,
  });
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('findLargeFiles', () => {
  it('finds a file that exists only in history, with its ref, path, blob id and size', async () => {
    const files = await findLargeFiles(origin, THRESHOLD, job);

    expect(files).toHaveLength(1);
    const [file] = files;
    expect(file).toMatchObject({ refName: 'refs/heads/main', path: LARGE.path, size: LARGE.bytes });
    expect(file?.oid).toMatch(/^[0-9a-f]{40}$/);
    expect((await git(origin, 'cat-file', '-s', file?.oid ?? '')).trim()).toBe(String(LARGE.bytes));
    expect(await git(origin, 'ls-tree', '-r', '--name-only', 'main')).not.toContain(LARGE.path);
  });

  it('finds nothing when no file is over the threshold (a file of exactly the threshold is not over it)', async () => {
    expect(await findLargeFiles(origin, LARGE.bytes, job)).toEqual([]);
    expect(await findLargeFiles(origin, 10 * LARGE.bytes, job)).toEqual([]);
  });
});

describe('rewriteHistory and publish without changes', () => {
  it('publishes into what a push killed inside `git init` left (HEAD written, objects/ not yet)', async () => {
    const hosted = hostedRepositoryPath(reposDir, 'octo', `killed-init-${++serial}`);
    await halfMadeByInit(hosted);

    const { results } = await publishAll(origin, hosted);

    expect(results.at(-1)).toMatchObject({ done: true, defaultBranch: 'main' });
    expect(await refsOf(hosted, 'refs/heads/', 'refs/tags/')).toEqual(
      await refsOf(origin, 'refs/heads/', 'refs/tags/'),
    );
  });

  it('keeps every commit and annotated tag id, also when LFS is chosen but nothing is large', async () => {
    for (const lfs of ['none', 'opt_in', 'opt_out'] as const) {
      const out = fresh('same');
      const result = await rewriteHistory(
        origin,
        out,
        { authors: [], lfs, thresholdBytes: 10 * LARGE.bytes },
        job,
      );

      expect(result).toMatchObject({ rewritten: false, mappedAuthors: 0, defaultBranch: 'main' });
      // Nothing is written: the raw history itself is what is published.
      expect(await stat(out).catch(() => undefined)).toBeUndefined();
      expect(publishedHistory(origin, out, result.rewritten)).toBe(origin);
    }
  });

  it('seeds an empty hosted repository from the source objects in one call (hard links); a clone equals the origin', async () => {
    const out = fresh('same');
    const { rewritten } = await rewriteHistory(
      origin,
      out,
      { authors: [], lfs: 'none', thresholdBytes: THRESHOLD },
      job,
    );
    const hosted = hostedRepositoryPath(reposDir, 'octo', `same-${serial}`);

    const { results, percents } = await publishAll(publishedHistory(origin, out, rewritten), hosted);

    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ done: true, pushed: 8, total: 8, defaultBranch: 'main' });
    expect(results[0]?.sizeKiB).toBeGreaterThan(100);
    expect(percents.at(-1)).toBe(100);
    const packs = (await readdir(join(hosted, 'objects', 'pack'))).filter((file) => file.endsWith('.pack'));
    expect(packs.length).toBeGreaterThan(0);
    expect((await stat(join(hosted, 'objects', 'pack', packs[0] ?? ''))).nlink).toBeGreaterThan(1);
    const clone = fresh('clone');
    await git(root, 'clone', '--mirror', '--quiet', hosted, clone);
    expect(await refsOf(clone)).toEqual(await refsOf(origin));
    expect((await git(hosted, 'symbolic-ref', 'HEAD')).trim()).toBe('refs/heads/main');
  });

  it('keeps what each later push brings as one pack, never loose objects, and rolls the small packs up past MAX_PACKS', async () => {
    const source = fresh('growing');
    await git(root, 'clone', '--mirror', '--quiet', origin, source);
    const hosted = hostedRepositoryPath(reposDir, 'octo', 'growing');
    await publishAll(source, hosted);
    const packs: number[] = [];
    for (let push = 1; push <= MAX_PACKS + 2; push++) {
      await commitOnMain(source, `push ${push}`);
      const { results } = await publishAll(source, hosted);
      expect(results.at(-1)).toMatchObject({ done: true });
      const files = await objectFiles(hosted);
      expect(files.looseFolders).toEqual([]);
      packs.push(files.packs);
    }
    expect(Math.max(...packs)).toBeLessThanOrEqual(MAX_PACKS);
    expect(await refsOf(hosted)).toEqual(await refsOf(source));
    await git(hosted, 'fsck', '--strict');
  });

  it('pushes over an earlier history in bounded batches under a tiny budget, percents rising to 100', async () => {
    const hosted = hostedRepositoryPath(reposDir, 'octo', 'tiny-budget');
    await publishAll(origin, hosted);
    const out = fresh('remapped');
    const ada = { remoteId: gitRemoteId(ADA.name, ADA.email), name: 'Ada Byron', email: 'ada@byron.example' };
    await rewriteHistory(origin, out, { authors: [ada], lfs: 'none', thresholdBytes: THRESHOLD }, job);

    const { results, percents } = await publishAll(out, hosted, 0, 2);

    expect(results.length).toBeGreaterThanOrEqual(4);
    expect(results.map((r) => r.pushed)).toEqual([...results.map((r) => r.pushed)].sort((a, b) => a - b));
    expect(results.at(-1)).toMatchObject({ done: true, pushed: 8, total: 8 });
    expect(percents.at(-1)).toBe(100);
    expect(percents).toEqual([...percents].sort((a, b) => a - b));
    expect(await refsOf(hosted)).toEqual(await refsOf(out));
  });
});

describe('rewriteHistory with author mappings', () => {
  const mappings = [
    { remoteId: gitRemoteId(ADA.name, ADA.email), name: 'Ada King', email: 'ada@king.example' },
    { remoteId: gitRemoteId(ODD.name, ODD.email), name: 'Zoë <Z> O’Brien', email: 'zoe@new.example' },
    { remoteId: gitRemoteId(GRACE.name, GRACE.email), name: GRACE.name, email: GRACE.email },
  ];

  it('rewrites author, committer and tagger identities through every ref; messages and counts stay', async () => {
    const out = fresh('mapped');
    const result = await rewriteHistory(
      origin,
      out,
      { authors: mappings, lfs: 'none', thresholdBytes: THRESHOLD },
      job,
    );

    expect(result).toMatchObject({ rewritten: true, mappedAuthors: 2 });
    const identities = new Set(
      (await git(out, 'log', '--branches', '--tags', '--format=%an <%ae>%n%cn <%ce>')).trim().split('\n'),
    );
    expect([...identities].sort()).toEqual(
      [
        'Ada King <ada@king.example>',
        'Grace Hopper <grace@example.com>',
        'Zoë Z O’Brien <zoe@new.example>',
      ].sort(),
    );
    expect(await git(out, 'for-each-ref', '--format=%(taggername) %(taggeremail)', 'refs/tags/')).toBe(
      'Ada King <ada@king.example>\n'.repeat(4),
    );
    const messages = (dir: string) => git(dir, 'for-each-ref', '--format=%(contents)', 'refs/tags/');
    expect(await messages(out)).toBe(await messages(origin));
    expect(await git(out, 'log', '--all', '--format=%B')).toBe(
      await git(origin, 'log', '--all', '--format=%B'),
    );
    expect(await git(out, 'for-each-ref', 'refs/replace/')).toBe('');
  });

  it('publishes without refs/replace or notes, and a republish over the unmapped history force-updates it', async () => {
    const hosted = hostedRepositoryPath(reposDir, 'octo', 'republished');
    await publishAll(origin, hosted);
    const out = fresh('mapped');
    await rewriteHistory(origin, out, { authors: mappings, lfs: 'none', thresholdBytes: THRESHOLD }, job);
    const tip = (await git(out, 'rev-parse', 'main')).trim();
    await git(out, 'update-ref', 'refs/notes/commits', tip);
    await git(out, 'update-ref', 'refs/replace/0123456789012345678901234567890123456789', tip);
    await git(out, 'update-ref', 'refs/original/refs/heads/main', tip);
    await git(
      hosted,
      'update-ref',
      'refs/heads/gone-from-origin',
      (await git(origin, 'rev-parse', 'main')).trim(),
    );

    const { results } = await publishAll(out, hosted);

    expect(results.at(-1)).toMatchObject({ done: true, pushed: 8, total: 8 });
    expect(await refsOf(hosted)).toEqual(await refsOf(out, 'refs/heads/', 'refs/tags/'));
    expect(await refsOf(hosted)).not.toEqual(await refsOf(origin));
    expect(await git(hosted, 'log', '--all', '--format=%an')).not.toContain(ADA.name);
  });
});

describe('rewriteHistory with large files', () => {
  const allBlobSizes = async (dir: string) => {
    const objects = await git(dir, 'rev-list', '--objects', '--all');
    const ids = objects
      .trim()
      .split('\n')
      .map((line) => line.split(' ')[0]);
    const sizes = await runGit(['cat-file', '--batch-check=%(objecttype) %(objectsize)'], {
      cwd: dir,
      home: job.home,
      transport: 'local',
      timeoutMs: 60_000,
      input: `${ids.join('\n')}\n`,
    });
    return sizes
      .toString('utf8')
      .trim()
      .split('\n')
      .filter((line) => line.startsWith('blob '))
      .map((line) => Number(line.split(' ')[1]));
  };

  it('opt_out removes the large blob from every ref and keeps every commit', async () => {
    const out = fresh('opt-out');
    const result = await rewriteHistory(
      origin,
      out,
      { authors: [], lfs: 'opt_out', thresholdBytes: THRESHOLD },
      job,
    );

    expect(result.rewritten).toBe(true);
    expect(result.largeFiles).toHaveLength(1);
    expect(Math.max(...(await allBlobSizes(out)))).toBeLessThanOrEqual(THRESHOLD);
    expect(Math.max(...(await allBlobSizes(origin)))).toBe(LARGE.bytes);
    expect(await git(out, 'rev-list', '--all', '--count')).toBe(
      await git(origin, 'rev-list', '--all', '--count'),
    );
    const messages = (dir: string) => git(dir, 'for-each-ref', '--format=%(contents)', 'refs/tags/');
    expect(await messages(out)).toBe(await messages(origin));
  });

  it('opt_in leaves pointer files and .gitattributes, and publishes the object to the LFS store', async () => {
    const out = fresh('opt-in');
    const [large] = await findLargeFiles(origin, THRESHOLD, job);
    const content = await runGit(['cat-file', 'blob', large?.oid ?? ''], {
      cwd: origin,
      home: job.home,
      transport: 'local',
      timeoutMs: 60_000,
    });
    const sha256 = createHash('sha256').update(content).digest('hex');

    const result = await rewriteHistory(
      origin,
      out,
      { authors: [], lfs: 'opt_in', thresholdBytes: THRESHOLD },
      job,
    );

    expect(result.rewritten).toBe(true);
    const added = (await git(out, 'log', '--format=%H', '--diff-filter=A', 'main', '--', LARGE.path)).trim();
    const pointer = await git(out, 'show', `${added}:${LARGE.path}`);
    expect(pointer).toBe(
      `version https://git-lfs.github.com/spec/v1\noid sha256:${sha256}\nsize ${LARGE.bytes}\n`,
    );
    expect(await git(out, 'show', `${added}:.gitattributes`)).toContain(
      `/${LARGE.path} filter=lfs diff=lfs merge=lfs -text`,
    );
    expect(Math.max(...(await allBlobSizes(out)))).toBeLessThanOrEqual(THRESHOLD);
    const messages = (dir: string) => git(dir, 'for-each-ref', '--format=%(contents)', 'refs/tags/');
    expect(await messages(out)).toBe(await messages(origin));

    const hosted = hostedRepositoryPath(reposDir, 'octo', 'hello');
    const { results } = await publishAll(out, hosted);

    expect(results.at(-1)?.done).toBe(true);
    const stored = await readFile(lfsObjectPath(hosted, sha256));
    expect(createHash('sha256').update(stored).digest('hex')).toBe(sha256);
    expect(await refsOf(hosted)).toEqual(await refsOf(out, 'refs/heads/', 'refs/tags/'));
  });
});
