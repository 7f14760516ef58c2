import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient, remoteRefs } from '#test/git-client';
import { importToTheEnd } from '#test/import-to-end';
import { startTestStack } from '#test/stack';

/**
 * A full file system under an import: the local stack's import working storage (the shared file
 * system in AWS) is a 1 MiB tmpfs, and the origin's history is 3 MiB of incompressible files. The
 * import ends in `error` with a message naming the full storage and its size, the hosted
 * repository gets no ref, and the attempt's working files are gone.
 */

const run = promisify(execFile);
const STORAGE_MIB = 1;

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let origin: OriginServer;
let storage: string;

beforeAll(async () => {
  stack = await startTestStack();
  // The stack keeps import working files beside its endpoints file (`lib/local/stack.ts`).
  storage = join(dirname(stack.endpointsFile), 'imports');
  await mkdir(storage, { recursive: true });
  await run('mount', ['-t', 'tmpfs', '-o', `size=${STORAGE_MIB}m`, 'tmpfs', storage]);
  git = await gitClient();
  const root = await mkdtemp(join(tmpdir(), 'storage-full-origin-'));
  await makeFixtureRepository(join(root, 'big.git'), { commits: 6, bytesPerCommit: 512 * 1024 });
  origin = await serveGitHttp(root);
  const user = await createUser(stack.endpointsFile, 'octocat');
  token = (await personalToken(stack.baseUrl, user.auth, ['repo'])).token;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await origin?.close();
  if (storage) await run('umount', [storage]).catch(() => undefined);
});

describe('an import whose working storage fills up', () => {
  it('ends in error naming the full storage, with no ref written and no working file left', async () => {
    const last = await importToTheEnd(stack.baseUrl, token, {
      owner: 'octocat',
      name: 'too-big',
      body: { vcs_url: `${origin.url}/big.git` },
      timeoutMs: 120_000,
    });
    expect(last.status, JSON.stringify(last)).toBe('error');
    expect(last.error_message).toMatch(/^The import's working storage is full: /);
    expect(last.error_message).toContain(`${STORAGE_MIB} MiB`);
    expect(await remoteRefs(git, `${stack.webUrl}/octocat/too-big.git`)).toEqual([]);
    // Nothing of the attempt is left taking the space.
    const left = await readdir(storage, { recursive: true });
    expect(left.filter((path) => path.split('/').length >= 3)).toEqual([]);
  }, 180_000);
});
