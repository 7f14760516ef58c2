import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '#shared/config';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient } from '#test/git-client';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';
import { hostedRepositoryPath } from '#vcs/hosted-paths';

/**
 * A Git origin that uses Git LFS (issue 28, item 4): the origin is this service's own Git front end
 * and LFS server on 127.0.0.1, holding a private repository pushed with git-lfs (one object on
 * `main`, one only on a branch). The import fetches the objects through the origin's batch API
 * with the import's credentials, and `git lfs pull` / `git lfs fetch --all` of the result gets
 * every one. An origin lacking an object still imports, and the report names what is missing.
 * Beside them, a plain file over the (lowered) large-file threshold takes the `use_lfs` path:
 * moved to LFS by the rewrite in one import, removed in the other; the origin's pointers stay.
 */

const THRESHOLD = 10_000;
process.env[ENV.largeFileBytes] = String(THRESHOLD);

let stack: Awaited<ReturnType<typeof startTestStack>>;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let work: string;

const onMain = randomBytes(3000);
const onBranch = randomBytes(5000);
const absent = Buffer.from('never uploaded to the origin\n');
const large = randomBytes(THRESHOLD * 2);
const oidOf = (content: Buffer) => createHash('sha256').update(content).digest('hex');
const pointerOf = (content: Buffer) =>
  `version https://git-lfs.github.com/spec/v1\noid sha256:${oidOf(content)}\nsize ${content.length}\n`;

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);
const repoUrl = (name: string) => `${stack.webUrl}/lfsimporter/${name}.git`;
const hostedPath = (name: string) =>
  hostedRepositoryPath(join(dirname(stack.endpointsFile), 'repositories'), 'lfsimporter', name);

async function createRepository(name: string, isPrivate: boolean) {
  const created = await fetch(`${stack.baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${token}` },
    body: JSON.stringify({ name, private: isPrivate }),
  });
  expect(created.status).toBe(201);
}

async function must(args: string[], cwd: string, password?: string) {
  const result = await git(args, { cwd, ...(password === undefined ? {} : { password }) });
  expect(result.code, `git ${args.join(' ')}: ${result.stderr}`).toBe(0);
  return result.stdout;
}

async function until(path: string, done: (body: Record<string, unknown>) => boolean, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    last = (await api('GET', path)).body;
    if (done(last) || last?.status === 'error') return last;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`import did not get there: ${JSON.stringify(last)}`);
}

/** Imports `origin` (with the token as its credentials) into a new repository `name`, answering the LFS choice. */
async function importInto(name: string, origin: string, useLfs: 'opt_in' | 'opt_out') {
  await createRepository(name, true);
  const path = `/repos/lfsimporter/${name}/import`;
  const started = await api('PUT', path, {
    vcs: 'git',
    // By address: the API refuses loopback names (`localhost`) in vcs_url.
    vcs_url: repoUrl(origin).replace('//localhost:', '//127.0.0.1:'),
    vcs_username: 'lfsimporter',
    vcs_password: token,
  });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const waiting = await until(path, (body) => body.has_large_files === true && body.import_percent === 100);
  expect(waiting).toMatchObject({ use_lfs: 'undecided', large_files_count: 1 });
  expect((await api('PATCH', `${path}/lfs`, { use_lfs: useLfs })).status).toBe(200);
  return until(path, (body) => body.status === 'complete');
}

beforeAll(async () => {
  stack = await startTestStack();
  git = await gitClient();
  work = await mkdtemp(join(tmpdir(), 'origin-lfs-e2e-'));
  const user = await createUser(stack.endpointsFile, 'lfsimporter');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;

  // The origin: `main` has a.bin, branch `side` has b.bin; both objects pushed with git-lfs.
  await createRepository('source', true);
  const dir = join(work, 'source');
  await must(['init', '-q', '-b', 'main', dir], work);
  await must(['lfs', 'track', '*.bin'], dir);
  await writeFile(join(dir, 'a.bin'), onMain);
  await must(['add', '.gitattributes', 'a.bin'], dir);
  await must(['commit', '-qm', 'a'], dir);
  await must(['checkout', '-qb', 'side'], dir);
  await writeFile(join(dir, 'b.bin'), onBranch);
  await must(['add', 'b.bin'], dir);
  await must(['commit', '-qm', 'b'], dir);
  await must(['checkout', '-q', 'main'], dir);
  await must(['remote', 'add', 'origin', repoUrl('source')], dir);
  await must(['lfs', 'push', '--all', 'origin'], dir, token);
  await must(['push', '-q', 'origin', 'main', 'side'], dir, token);
  // The front end refuses files over the threshold (as GitHub does over 100 MB): the origin gets
  // its large plain file on disk, as a history from before such a limit holds one.
  await writeFile(join(dir, 'large.dat'), large);
  await must(['add', 'large.dat'], dir);
  await must(['commit', '-qm', 'large'], dir);
  await must(['push', '-q', '--no-verify', hostedPath('source'), 'main'], dir);

  // A second origin whose tag points at a pointer to an object nobody uploaded.
  await createRepository('gappy', true);
  await must(['remote', 'add', 'gappy', repoUrl('gappy')], dir);
  await must(['checkout', '-qb', 'gap'], dir);
  await writeFile(join(dir, 'gone.bin'), pointerOf(absent));
  await must(['add', 'gone.bin'], dir);
  await must(['commit', '-qm', 'pointer without its object'], dir);
  await must(['tag', 'v1'], dir);
  await must(['checkout', '-q', 'main'], dir);
  await must(['lfs', 'push', 'gappy', 'main'], dir, token);
  // No pre-push hook here (and git-lfs would refuse the push for the missing object).
  await must(['push', '-q', '--no-verify', hostedPath('gappy'), 'main', 'v1'], dir);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('importing a Git origin that uses Git LFS', () => {
  it('brings every LFS object of every ref, and git lfs pull of the result gets them', async () => {
    expect(await importInto('copy', 'source', 'opt_in')).toMatchObject({ status: 'complete' });

    const clone = join(work, 'copy-clone');
    await must(['clone', '-q', repoUrl('copy'), clone], work, token);
    await must(['lfs', 'pull'], clone, token);
    expect((await readFile(join(clone, 'a.bin'))).equals(onMain)).toBe(true);
    expect((await readFile(join(clone, 'large.dat'))).equals(large)).toBe(true);
    expect(await readFile(join(clone, '.gitattributes'), 'utf8')).toMatch(/large\.dat filter=lfs/);
    await must(['lfs', 'fetch', '--all', 'origin'], clone, token);
    for (const content of [onMain, onBranch, large]) {
      const oid = oidOf(content);
      const stored = join(clone, '.git', 'lfs', 'objects', oid.slice(0, 2), oid.slice(2, 4), oid);
      expect((await stat(stored)).size).toBe(content.length);
    }
    await must(['checkout', '-q', 'side'], clone);
    expect((await readFile(join(clone, 'b.bin'))).equals(onBranch)).toBe(true);
    const report = (await api('GET', '/repos/lfsimporter/copy/import/report')).body;
    expect(report).toMatchObject({ missing_lfs_objects_count: 0, missing_lfs_objects: [] });
  }, 120_000);

  it('imports an origin lacking an object, and the report lists it', async () => {
    expect(await importInto('gappy-copy', 'gappy', 'opt_out')).toMatchObject({ status: 'complete' });

    const report = (await api('GET', '/repos/lfsimporter/gappy-copy/import/report')).body;
    expect(report).toMatchObject({
      missing_lfs_objects_count: 1,
      missing_lfs_objects: [
        {
          oid: oidOf(absent),
          size: absent.length,
          path: 'gone.bin',
          ref: expect.stringMatching(/^refs\/(heads\/gap|tags\/v1)$/),
        },
      ],
    });
    const clone = join(work, 'gappy-clone');
    await must(['clone', '-q', repoUrl('gappy-copy'), clone], work, token);
    expect((await readFile(join(clone, 'a.bin'))).equals(onMain)).toBe(true);
    await expect(stat(join(clone, 'large.dat'))).rejects.toThrow();
  }, 120_000);
  it('follows an origin that starts using Git LFS: the sync fetches the new object', async () => {
    // An origin without any pointer, imported and followed.
    await createRepository('plain', true);
    const dir = join(work, 'plain');
    await must(['init', '-q', '-b', 'main', dir], work);
    await writeFile(join(dir, 'README'), 'no LFS yet\n');
    await must(['add', 'README'], dir);
    await must(['commit', '-qm', 'plain'], dir);
    await must(['remote', 'add', 'origin', repoUrl('plain')], dir);
    await must(['push', '-q', 'origin', 'main'], dir, token);
    await createRepository('plain-copy', true);
    const path = '/repos/lfsimporter/plain-copy/import';
    const started = await api('PUT', path, {
      vcs: 'git',
      vcs_url: repoUrl('plain').replace('//localhost:', '//127.0.0.1:'),
      vcs_username: 'lfsimporter',
      vcs_password: token,
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    expect(await until(path, (body) => body.status === 'complete')).toMatchObject({ status: 'complete' });
    expect((await api('PUT', `${path}/sync`, { interval_minutes: null })).status).toBe(200);

    // The origin starts tracking *.bin with git-lfs.
    const added = randomBytes(4000);
    await must(['lfs', 'track', '*.bin'], dir);
    await writeFile(join(dir, 'c.bin'), added);
    await must(['add', '.gitattributes', 'c.bin'], dir);
    await must(['commit', '-qm', 'first LFS object'], dir);
    await must(['push', '-q', 'origin', 'main'], dir, token);

    expect((await api('POST', `${path}/sync`)).status).toBe(202);
    await until(
      `${path}/sync`,
      (body) => (body.last_sync as { status?: string } | null)?.status === 'succeeded',
    );
    const clone = join(work, 'plain-clone');
    await must(['clone', '-q', repoUrl('plain-copy'), clone], work, token);
    await must(['lfs', 'pull'], clone, token);
    expect((await readFile(join(clone, 'c.bin'))).equals(added)).toBe(true);
  }, 120_000);
});
