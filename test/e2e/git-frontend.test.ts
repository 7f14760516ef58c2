import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLargeCommit } from '#local/git-fixtures';
import { type FrontEndProcess, startFrontEndProcess } from '#local/git-frontend-process';
import { createUser, personalToken } from '#test/fixtures';
import { type GitResult, gitClient } from '#test/git-client';
import { json, startTestStack } from '#test/stack';
import { hostedRepositoryPath } from '#vcs/hosted-paths';

/**
 * The Git front end as its container runs it: `functions/git-server/main.ts` in a process of its
 * own, on the test stack's table and repositories, reached by real git and git-lfs. Large clones,
 * pushes and LFS objects pass through it while its resident memory is watched (`VmHWM`, the peak,
 * reset before each transfer): everything is streamed, so it grows by far less than the data.
 * Sizes in MB from the environment (the targets by default; the suite's budget may lower
 * them): GIT_FRONTEND_CLONE_MB, GIT_FRONTEND_PUSH_MB, GIT_FRONTEND_LFS_MB.
 */

const MB = 1024 * 1024;
const size = (name: string, fallback: number) => Number(process.env[name] || fallback) * MB;
const CLONE_BYTES = size('GIT_FRONTEND_CLONE_MB', 300);
const PUSH_BYTES = size('GIT_FRONTEND_PUSH_MB', 200);
const LFS_BYTES = size('GIT_FRONTEND_LFS_MB', 150);
/** The bound on a front-end process's growth, whatever the size of what passes through. */
const MAX_GROWTH_BYTES = 150 * MB;

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let work: string;
let git: Awaited<ReturnType<typeof gitClient>>;
let frontEnd: FrontEndProcess;
let frontEndUrl: string;
let owner: { login: string; auth: string };
let other: { login: string; auth: string };
let ownerToken: string;
let narrowToken: string;
let otherToken: string;

const url = (name: string, login = owner.login) => `${frontEndUrl}/${login}/${name}.git`;
const repositoriesDir = () => join(dirname(stack.endpointsFile), 'repositories');

async function createRepository(name: string, isPrivate = false): Promise<void> {
  const response = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: owner.auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name, private: isPrivate }),
  });
  expect(response.status).toBe(201);
}

/** How much the front end's resident memory grew at its peak while `transfer` ran. */
const growthDuring = (transfer: () => Promise<void>) => frontEnd.growthDuring(transfer);

const fastImport = async (gitDir: string, bytes: number) => writeLargeCommit(gitDir, bytes, work);

const head = async (gitDir: string) => (await git(['--git-dir', gitDir, 'rev-parse', 'main'])).stdout.trim();

beforeAll(async () => {
  stack = await startTestStack();
  work = await mkdtemp(join(tmpdir(), 'git-frontend-'));
  git = await gitClient();
  owner = await createUser(stack.endpointsFile, 'feowner');
  other = await createUser(stack.endpointsFile, 'feother');
  ownerToken = (await personalToken(stack.baseUrl, owner.auth, ['repo'])).token;
  narrowToken = (await personalToken(stack.baseUrl, owner.auth, ['user'])).token;
  otherToken = (await personalToken(stack.baseUrl, other.auth, ['repo'])).token;

  frontEnd = await startFrontEndProcess();
  frontEndUrl = frontEnd.url;
}, 60_000);

afterAll(async () => {
  if (frontEnd?.process.exitCode === null) frontEnd.process.kill('SIGKILL');
  await stack?.stop();
  if (work) await rm(work, { recursive: true, force: true });
  if (stack) await rm(repositoriesDir(), { recursive: true, force: true });
});

describe('the Git front end in a process of its own', () => {
  it('answers its health check without a request to the table', async () => {
    const response = await fetch(`${frontEndUrl}/_health`);
    expect([response.status, await response.text()]).toEqual([200, 'ok']);
  });

  it(`clones a ${CLONE_BYTES / MB} MB repository with its memory growing by under 150 MB`, async () => {
    await createRepository('imported');
    // Where the import's push step puts an imported repository.
    const hosted = hostedRepositoryPath(repositoriesDir(), owner.login, 'imported');
    await mkdir(dirname(hosted), { recursive: true });
    expect((await git(['init', '-q', '--bare', hosted])).code).toBe(0);
    await fastImport(hosted, CLONE_BYTES);

    const clone = join(work, 'imported.git');
    let cloned: GitResult | undefined;
    const growth = await growthDuring(async () => {
      cloned = await git(['clone', '-q', '--bare', url('imported'), clone]);
    });
    expect(cloned?.code, cloned?.stderr).toBe(0);
    expect(await head(clone)).toBe(await head(hosted));
    const packed = await git(['--git-dir', clone, 'count-objects', '-v']);
    expect(Number(/size-pack: (\d+)/.exec(packed.stdout)?.[1]) * 1024).toBeGreaterThan(CLONE_BYTES);
    expect(growth).toBeLessThan(MAX_GROWTH_BYTES);
    await rm(clone, { recursive: true, force: true });
  }, 120_000);

  it(`takes the owner's push of ${PUSH_BYTES / MB} MB, records it, with its memory growing by under 150 MB`, async () => {
    await createRepository('pushed');
    const local = join(work, 'pushed');
    expect((await git(['init', '-q', '-b', 'main', local])).code).toBe(0);
    await fastImport(join(local, '.git'), PUSH_BYTES);

    let pushed: GitResult | undefined;
    const growth = await growthDuring(async () => {
      pushed = await git(['push', '-q', url('pushed'), 'main'], { cwd: local, password: ownerToken });
    });
    expect(pushed?.code, pushed?.stderr).toBe(0);
    const hosted = hostedRepositoryPath(repositoriesDir(), owner.login, 'pushed');
    expect(await head(hosted)).toBe(await head(join(local, '.git')));
    const repository = await json(
      await fetch(`${stack.baseUrl}/repos/${owner.login}/pushed`, { headers: { Authorization: owner.auth } }),
    );
    expect(repository.size * 1024).toBeGreaterThan(PUSH_BYTES);
    expect(repository.pushed_at).not.toBeNull();
    expect(growth).toBeLessThan(MAX_GROWTH_BYTES);
    await rm(local, { recursive: true, force: true });
  }, 120_000);

  it(`moves a ${LFS_BYTES / MB} MB Git LFS object up and down with its memory growing by under 150 MB`, async () => {
    await createRepository('media');
    const local = join(work, 'media');
    expect((await git(['init', '-q', '-b', 'main', local])).code).toBe(0);
    expect((await git(['lfs', 'track', '*.bin'], { cwd: local })).code).toBe(0);
    const object = randomBytes(LFS_BYTES);
    await writeFile(join(local, 'large.bin'), object);
    expect((await git(['add', '.gitattributes', 'large.bin'], { cwd: local })).code).toBe(0);
    expect((await git(['commit', '-qm', 'large'], { cwd: local })).code).toBe(0);
    expect((await git(['remote', 'add', 'origin', url('media')], { cwd: local })).code).toBe(0);

    let pushed: GitResult | undefined;
    const up = await growthDuring(async () => {
      pushed = await git(['push', '-q', 'origin', 'main'], { cwd: local, password: ownerToken });
    });
    expect(pushed?.code, pushed?.stderr).toBe(0);
    const clone = join(work, 'media-clone');
    let cloned: GitResult | undefined;
    const down = await growthDuring(async () => {
      cloned = await git(['clone', '-q', url('media'), clone]);
    });
    expect(cloned?.code, cloned?.stderr).toBe(0);
    expect((await stat(join(clone, 'large.bin'))).size).toBe(LFS_BYTES);
    expect((await readFile(join(clone, 'large.bin'))).equals(object)).toBe(true);
    expect(
      [up, down].every((growth) => growth < MAX_GROWTH_BYTES),
      `${up} and ${down} bytes`,
    ).toBe(true);
    await Promise.all([local, clone].map((dir) => rm(dir, { recursive: true, force: true })));
  }, 120_000);

  it('keeps the access rules: public clones for anyone, private ones for the owner', async () => {
    await createRepository('hidden', true);
    const anonymous = await git(['clone', '-q', url('hidden'), join(work, 'hidden-anonymous')]);
    expect(anonymous.code).not.toBe(0);
    expect(anonymous.stderr).toMatch(/could not read Username/);
    const challenge = await fetch(`${url('hidden')}/info/refs?service=git-upload-pack`);
    expect(challenge.status).toBe(401);
    expect(challenge.headers.get('www-authenticate')).toMatch(/^Basic realm="/);
    const byOther = await git(['clone', '-q', url('hidden'), join(work, 'hidden-other')], {
      password: otherToken,
    });
    expect(byOther.stderr).toContain('remote: Repository not found.');
    const byOwner = await git(['clone', '-q', url('hidden'), join(work, 'hidden-owner')], {
      password: ownerToken,
    });
    expect(byOwner.code, byOwner.stderr).toBe(0);

    await createRepository('visible');
    const cloned = await git(['clone', '-q', url('visible'), join(work, 'visible-anonymous')]);
    expect(cloned.code, cloned.stderr).toBe(0);
  });

  it("refuses someone else's push and a push without the repo scope, in git's output", async () => {
    const local = join(work, 'visible-anonymous');
    await writeFile(join(local, 'README.md'), 'not yours\n');
    expect((await git(['add', 'README.md'], { cwd: local })).code).toBe(0);
    expect((await git(['commit', '-qm', 'not yours'], { cwd: local })).code).toBe(0);

    const byOther = await git(['push', '-q', url('visible'), 'HEAD:main'], {
      cwd: local,
      password: otherToken,
    });
    expect(byOther.code).not.toBe(0);
    expect(byOther.stderr).toContain(
      `remote: Permission to ${owner.login}/visible.git denied to ${other.login}.`,
    );
    expect(byOther.stderr).toMatch(/error: 403/);

    const narrow = await git(['push', '-q', url('visible'), 'HEAD:main'], {
      cwd: local,
      password: narrowToken,
    });
    expect(narrow.code).not.toBe(0);
    expect(narrow.stderr).toContain(
      `remote: Permission to ${owner.login}/visible.git denied to ${owner.login}.`,
    );

    const anonymous = await git(['push', '-q', url('visible'), 'HEAD:main'], { cwd: local });
    expect(anonymous.code).not.toBe(0);
    expect(anonymous.stderr).toMatch(/could not read Username/);
    expect((await git(['ls-remote', url('visible')])).stdout).toBe('');
  });

  it('stops on SIGTERM once its requests are done', async () => {
    const exited = new Promise<number | null>((resolve) => frontEnd.process.once('exit', resolve));
    frontEnd.process.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
