import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, prepareDumb, serveGitDaemon, serveGitHttp } from '#local/git-origins';
import { rawJobs } from '#test/raw-jobs';
import { gitAdapter } from '#vcs/git';
import { publishedHistory, rewriteHistory } from '#vcs/history';
import { type RawJob, rawRepositoryPath } from '#vcs/origin';

/*
 * Git's object checks on an imported Git history run once (issue 25, item 9): a fetch over the
 * pack protocol (smart HTTP, `git://`) has git check every object as it arrives
 * (`fetch.fsckObjects`), and the rewrite does not run `git fsck` over the same objects again; a
 * dumb HTTP fetch, which git does not check, is checked whole by the rewrite. What ran is read
 * from a `git` on PATH that logs each call and hands it to the real git.
 */

const exec = promisify(execFile);
const git = async (cwd: string, ...args: string[]) =>
  (
    await exec('git', args, {
      cwd,
      env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd },
    })
  ).stdout.trim();

let root: string;
let work: string;
let log: string;
let smart: OriginServer;
let dumb: OriginServer;
let daemon: OriginServer;
const previousPath = process.env.PATH;
const job = rawJobs(() => work);

/**
 * A bare repository whose `main` ends with a commit whose tree holds the directory `name`, its
 * mode written `40000` as git writes it, or `040000` zero-padded as some early tools did. A tree
 * `git mktree` will not write (zero-padded, or a name holding `/`) holds that entry alone.
 */
async function repositoryWithEntry(dir: string, name: string, mode: '40000' | '040000') {
  await makeFixtureRepository(dir, { commits: 3 });
  const listing = await git(dir, 'ls-tree', 'main');
  const config = await gitWithInput(dir, ['hash-object', '-w', '--stdin'], '[core]\n\thooksPath = /tmp\n');
  const sub = await gitWithInput(dir, ['mktree'], `100644 blob ${config}\tconfig\n`);
  const tree =
    mode === '040000' || name.includes('/')
      ? await gitWithInput(
          dir,
          ['hash-object', '-t', 'tree', '--literally', '-w', '--stdin'],
          Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.from(sub, 'hex')]),
        )
      : await gitWithInput(dir, ['mktree'], `${listing}\n040000 tree ${sub}\t${name}\n`);
  const parent = await git(dir, 'rev-parse', 'main');
  const commit = await git(
    dir,
    '-c',
    'user.name=Old Tool',
    '-c',
    'user.email=old@example.com',
    'commit-tree',
    tree,
    '-p',
    parent,
    '-m',
    'entry',
  );
  await git(dir, 'update-ref', 'refs/heads/main', commit);
  await prepareDumb(dir);
  return commit;
}

/** `git <args>` in `dir` with `input` on its standard input; its output, trimmed. */
async function gitWithInput(dir: string, args: readonly string[], input: string | Buffer): Promise<string> {
  const child = execFile('git', args, { cwd: dir, env: { PATH: previousPath } });
  const out = new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout?.on('data', (chunk) => {
      text += chunk;
    });
    child.on('close', (code) =>
      code === 0 ? resolve(text.trim()) : reject(new Error(`git ${args[0]} failed`)),
    );
  });
  child.stdin?.end(input);
  return out;
}

let hostileCommit: string;
let slashedCommit: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'arrival-origins-'));
  work = await mkdtemp(join(tmpdir(), 'arrival-work-'));
  await makeFixtureRepository(join(root, 'fine.git'), { commits: 40, branches: 2, annotatedTags: 2 });
  await prepareDumb(join(root, 'fine.git'));
  hostileCommit = await repositoryWithEntry(join(root, 'hostile.git'), '.GIT', '40000');
  await repositoryWithEntry(join(root, 'padded.git'), 'dir', '040000');
  slashedCommit = await repositoryWithEntry(join(root, 'slashed.git'), 'x/y', '40000');
  [smart, dumb, daemon] = await Promise.all([
    serveGitHttp(root),
    serveGitHttp(root, { mode: 'dumb' }),
    serveGitDaemon(root),
  ]);
  // The service looks git up on PATH when it spawns it (toolPath): this one logs, then runs git.
  const realGit = (await exec('sh', ['-c', 'command -v git'], { env: { PATH: previousPath } })).stdout.trim();
  const shims = join(work, 'shims');
  await mkdir(shims);
  log = join(work, 'git-calls.log');
  await writeFile(join(shims, 'git'), `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nexec '${realGit}' "$@"\n`);
  await chmod(join(shims, 'git'), 0o755);
  process.env.PATH = `${shims}:${previousPath}`;
}, 120_000);

afterAll(async () => {
  process.env.PATH = previousPath;
  await Promise.all([smart?.close(), dumb?.close(), daemon?.close()]);
  await rm(root, { recursive: true, force: true });
  await rm(work, { recursive: true, force: true });
});

beforeEach(async () => {
  await writeFile(log, '');
});

/** The raw step to its end, then the rewrite (nothing to change): what an import does. */
async function importHistory(raw: RawJob) {
  const adapter = gitAdapter();
  for (let chunk = 0; ; chunk++) {
    const result = await adapter.importRawChunk(raw, 600_000, () => undefined);
    if (result.done) break;
    if (chunk > 20) throw new Error('no end');
  }
  const home = join(raw.workDir, 'home');
  return rewriteHistory(
    rawRepositoryPath(raw.workDir),
    join(raw.workDir, 'out.git'),
    { authors: [], lfs: 'none', thresholdBytes: 1_000_000 },
    { home, timeoutMs: 60_000 },
  );
}

const calls = async () => (await readFile(log, 'utf8')).split('\n').filter((line) => line !== '');
const fsckRuns = async () => (await calls()).filter((line) => / fsck( |$)/.test(` ${line}`)).length;

describe("git's object checks on an imported Git history", () => {
  it.each([
    ['smart HTTP', () => `${smart.url}/fine.git`],
    ['git://', () => `${daemon.url}/fine.git`],
  ])('over %s run as the objects arrive, and git fsck never runs', async (_, url) => {
    await importHistory(await job(url()));

    const fetches = (await calls()).filter((line) => line.includes(' clone --bare '));
    expect(fetches).toHaveLength(1);
    expect(fetches[0]).toContain('fetch.fsckObjects=true');
    expect(fetches[0]).toContain('fetch.fsck.zeroPaddedFilemode=ignore');
    expect(await fsckRuns()).toBe(0);
  });

  it('over dumb HTTP, which git does not check as it fetches, run whole once before the rewrite', async () => {
    await importHistory(await job(`${dumb.url}/fine.git`));

    expect(await fsckRuns()).toBe(1);
  });

  it.each([
    ['smart HTTP', () => `${smart.url}/hostile.git`],
    ['git://', () => `${daemon.url}/hostile.git`],
    ['dumb HTTP', () => `${dumb.url}/hostile.git`],
  ])('over %s drop a tree entry .GIT and list it with its commit (issue 28)', async (_, url) => {
    const raw = await job(url());
    const result = await importHistory(raw);

    expect(result.unstorablePaths).toEqual([
      { commit: hostileCommit, path: '.GIT/config', reason: 'git_metadata' },
    ]);
    const out = join(raw.workDir, 'out.git');
    expect(await git(out, 'ls-tree', '--name-only', 'main')).not.toContain('.GIT');
    await git(out, 'fsck', '--strict', '--no-dangling');
  });

  it.each([
    ['smart HTTP', () => `${smart.url}/slashed.git`],
    ['git://', () => `${daemon.url}/slashed.git`],
    ['dumb HTTP', () => `${dumb.url}/slashed.git`],
  ])('over %s drop a tree entry whose name holds a slash and list it with its commit', async (_, url) => {
    const raw = await job(url());
    const result = await importHistory(raw);

    expect(result.unstorablePaths).toEqual([
      { commit: slashedCommit, path: 'x/y/config', reason: 'slash_in_name' },
    ]);
    const out = join(raw.workDir, 'out.git');
    expect(await git(out, 'ls-tree', '-r', '--name-only', 'main')).not.toContain('config');
    await git(out, 'fsck', '--strict', '--no-dangling');
  });

  it.each([
    ['smart HTTP', () => `${smart.url}/padded.git`],
    ['git://', () => `${daemon.url}/padded.git`],
  ])('over %s import zero-padded tree modes, which some early Git tools wrote', async (_, url) => {
    const raw = await job(url());
    const { rewritten } = await importHistory(raw);
    const published = publishedHistory(
      rawRepositoryPath(raw.workDir),
      join(raw.workDir, 'out.git'),
      rewritten,
    );

    expect(await git(published, 'rev-parse', 'main')).toBe(
      await git(join(root, 'padded.git'), 'rev-parse', 'main'),
    );
  });
});
