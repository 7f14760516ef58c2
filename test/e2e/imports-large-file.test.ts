import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSvnRepository } from '#local/svn-fixtures';
import { type SvnServer, serveSvn } from '#local/svn-origins';
import { DEFAULT_LARGE_FILE_BYTES, ENV } from '#shared/config';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient } from '#test/git-client';
import { importApiCall } from '#test/import-api';
import { startTestStack } from '#test/stack';

/**
 * A file over 100 MB at the service's default threshold (no lowered `LARGE_FILE_BYTES`): a
 * Subversion origin on `svnserve` holds one, the import finds it, waits for the LFS choice, and
 * `git clone` of the hosted repository gets the whole file back through Git LFS.
 */

delete process.env[ENV.largeFileBytes];
const BIG_BYTES = 100 * 1024 * 1024 + 1;

let stack: Awaited<ReturnType<typeof startTestStack>>;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let work: string;
let svnserve: SvnServer;

const api = (method: string, path: string, body?: unknown) =>
  importApiCall(stack.baseUrl, token, method, path, body);

async function until(path: string, done: (body: Record<string, unknown>) => boolean, timeoutMs = 150_000) {
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    last = (await api('GET', path)).body;
    if (done(last) || last?.status === 'error') return last;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`import did not get there: ${JSON.stringify(last)}`);
}

const sha256 = (path: string) =>
  new Promise<string>((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });

beforeAll(async () => {
  expect(DEFAULT_LARGE_FILE_BYTES).toBe(100 * 1024 * 1024);
  stack = await startTestStack();
  git = await gitClient();
  work = await mkdtemp(join(tmpdir(), 'large-file-e2e-'));
  await makeSvnRepository(join(work, 'origin'), { largeFileBytes: BIG_BYTES });
  svnserve = await serveSvn(join(work, 'origin'));
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 120_000);

afterAll(async () => {
  await svnserve?.close();
  await stack?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('a file over 100 MB at the default threshold', () => {
  it('is found, waits for the LFS choice, and comes back whole through Git LFS', async () => {
    const created = await fetch(`${stack.baseUrl}/user/repos`, {
      method: 'POST',
      headers: { Authorization: `token ${token}` },
      body: JSON.stringify({ name: 'huge' }),
    });
    expect(created.status).toBe(201);
    const path = '/repos/octocat/huge/import';
    expect((await api('PUT', path, { vcs_url: svnserve.url('repo') })).status).toBe(201);
    const waiting = await until(path, (b) => b.has_large_files === true && b.import_percent === 100);
    expect(waiting).toMatchObject({
      status: 'importing',
      vcs: 'subversion',
      use_lfs: 'undecided',
      large_files_count: 1,
      large_files_size: BIG_BYTES,
    });
    expect((await api('GET', `${path}/large_files`)).body).toEqual([
      expect.objectContaining({ path: 'big.bin', size: BIG_BYTES }),
    ]);
    expect((await api('PATCH', `${path}/lfs`, { use_lfs: 'opt_in' })).status).toBe(200);
    expect(await until(path, (b) => b.status === 'complete')).toMatchObject({ status: 'complete' });

    const dir = await mkdtemp(join(work, 'clone-'));
    const clone = await git(['clone', '-q', `${stack.webUrl}/octocat/huge.git`, dir]);
    expect(clone.code, clone.stderr).toBe(0);
    expect((await stat(join(dir, 'big.bin'))).size).toBe(BIG_BYTES);
    expect(await sha256(join(dir, 'big.bin'))).toBe(
      createHash('sha256').update(Buffer.alloc(BIG_BYTES, 7)).digest('hex'),
    );
    expect(await readFile(join(dir, '.gitattributes'), 'utf8')).toContain('big.bin filter=lfs');
    // In Git the file is a pointer: nothing in the hosted history is over the limit.
    const blob = await git(['cat-file', '-s', 'HEAD:big.bin'], { cwd: dir });
    expect(Number(blob.stdout.trim())).toBeLessThan(200);
  }, 240_000);
});
