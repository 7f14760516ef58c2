import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, prepareDumb, serveGitDaemon, serveGitHttp } from '#local/git-origins';
import { rawJobs } from '#test/raw-jobs';
import { gitAdapter } from '#vcs/git';
import { prepareHome } from '#vcs/git-command';
import { rewriteHistory } from '#vcs/history';
import { OriginFailed } from '#vcs/origin';
import { publish } from '#vcs/publish';

/*
 * Readable failures of Git imports (issue 18): what a user reads in `error_message` when git
 * fails, for real failures of real git: an origin whose repository lost a tree (over smart HTTP,
 * `git://` and dumb HTTP), a raw history missing an object, a hosted repository with a stale ref
 * lock. Each message names the step, carries git's and the origin's own words, and where git
 * names it the object, commit or ref; never a local path or a credential.
 */

const exec = promisify(execFile);
const AUTH = { username: 'importer', password: 'pw-Fail-77-never-shown' };

let root: string;
let work: string;
let servers: OriginServer[];
let smart: OriginServer;
let locked: OriginServer;
let dumb: OriginServer;
let daemon: OriginServer;
/** The tree the broken origin lost, and the commit that needs it. */
let lostTree: string;
let commit: string;

const git = async (cwd: string, ...args: string[]) =>
  (await exec('git', args, { cwd, env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd } }))
    .stdout;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'git-failing-origins-'));
  work = await mkdtemp(join(tmpdir(), 'git-failing-work-'));
  const broken = join(root, 'broken.git');
  await makeFixtureRepository(broken, { commits: 5, branches: 1, annotatedTags: 0 });
  await cp(broken, join(root, 'whole.git'), { recursive: true });
  commit = (await git(broken, 'rev-parse', 'HEAD')).trim();
  lostTree = (await git(broken, 'rev-parse', 'HEAD:')).trim();
  // The fixture's objects are loose: losing one is what a damaged server disk does.
  await unlink(join(broken, 'objects', lostTree.slice(0, 2), lostTree.slice(2)));
  await prepareDumb(broken);
  servers = await Promise.all([
    serveGitHttp(root),
    serveGitHttp(root, { auth: AUTH }),
    serveGitHttp(root, { mode: 'dumb' }),
    serveGitDaemon(root),
  ]);
  [smart, locked, dumb, daemon] = servers as [OriginServer, OriginServer, OriginServer, OriginServer];
}, 60_000);

afterAll(async () => {
  await Promise.all((servers ?? []).map((server) => server.close()));
  await rm(root, { recursive: true, force: true });
  await rm(work, { recursive: true, force: true });
});

const job = rawJobs(() => work);

/** The message the raw step fails with. */
async function rawFailure(url: string, extra = {}): Promise<string> {
  const failed = await gitAdapter()
    .importRawChunk(await job(url, extra), 600_000, () => undefined)
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  expect(failed).toBeInstanceOf(OriginFailed);
  return (failed as Error).message;
}

const noLocalPaths = (message: string) => {
  expect(message).not.toContain(work);
  expect(message).not.toContain(root);
  expect(message).not.toContain(tmpdir());
};

describe('a Git origin that fails', () => {
  it('over smart HTTP and git:// says the step and the origin’s own words (the object it lost), before git’s', async () => {
    for (const url of [`${smart.url}/broken.git`, `${daemon.url}/broken.git`]) {
      const message = await rawFailure(url);
      expect(message).toMatch(/^Fetching from the origin failed: /);
      expect(message).toContain(`remote: fatal: bad tree object ${lostTree}`);
      expect(message).toContain('possible repository corruption on the remote side');
      // The cause comes before its consequence on this side.
      expect(message.indexOf('bad tree object')).toBeLessThan(message.indexOf('invalid index-pack output'));
      noLocalPaths(message);
    }
  });

  it('over dumb HTTP names the missing tree and the commit being walked', async () => {
    const message = await rawFailure(`${dumb.url}/broken.git`);
    expect(message).toMatch(/^Fetching from the origin failed: /);
    expect(message).toContain(`Cannot obtain needed tree ${lostTree}`);
    const needing = /while processing commit ([0-9a-f]{40})/.exec(message)?.[1] ?? '';
    // The dumb walker names the commit it was walking when the tree was missing: one of the origin's.
    expect((await git(join(root, 'whole.git'), 'cat-file', '-t', needing)).trim()).toBe('commit');
    noLocalPaths(message);
  });

  it('never shows the credentials it fetched with', async () => {
    const message = await rawFailure(`${locked.url}/broken.git`, { credentials: AUTH });
    expect(message).toContain(`bad tree object ${lostTree}`);
    expect(message).not.toContain(AUTH.password);
    noLocalPaths(message);
  });
});

describe('the later Git steps when they fail', () => {
  let home: string;
  beforeAll(async () => {
    home = join(work, 'home');
    await prepareHome(home, []);
  });

  it('the rewrite of a raw history missing an object names the commit and the object, no path', async () => {
    const out = join(work, 'out.git');
    const failed = await rewriteHistory(
      join(root, 'broken.git'),
      out,
      { authors: [], lfs: 'none', thresholdBytes: 1_000_000 },
      { home, timeoutMs: 60_000 },
    ).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(OriginFailed);
    const message = (failed as Error).message;
    expect(message).toMatch(/^The history does not pass Git's object checks: /);
    expect(message).toContain(`broken link from commit ${commit} to tree ${lostTree}`);
    expect(message).toContain(`missing tree ${lostTree}`);
    noLocalPaths(message);
  });

  it('the push into a hosted repository with a stale ref lock names the ref and git’s reason, no path', async () => {
    const hosted = join(work, 'hosted.git');
    await exec('git', ['init', '--bare', '--quiet', hosted]);
    await mkdir(join(hosted, 'refs', 'heads'), { recursive: true });
    await writeFile(join(hosted, 'refs', 'heads', 'main.lock'), '');
    const failed = await publish(
      join(root, 'whole.git'),
      hosted,
      { budgetMs: 60_000, lfs: { store: { put: async () => undefined }, owner: 'octocat', repo: 'hosted' } },
      { home, timeoutMs: 60_000 },
    ).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(OriginFailed);
    const message = (failed as Error).message;
    expect(message).toMatch(/^Publishing to the repository failed \(git [a-z-]+, exit \d+\): /);
    expect(message).toContain("cannot lock ref 'refs/heads/main'");
    expect(message).toContain('File exists');
    expect(message).not.toContain('Another git process');
    noLocalPaths(message);
  });
});
