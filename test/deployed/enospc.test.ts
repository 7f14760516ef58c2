import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { type AsDeployed, startAsDeployed } from '#test/as-deployed';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient, remoteRefs } from '#test/git-client';
import { importToTheEnd } from '#test/import-to-end';

/**
 * A full shared file system under an import, as deployed (`test/support/as-deployed.ts`): the
 * imports' folder of the file system is a 2 MiB tmpfs (owned by the access point's user), and the
 * origin's history is 3 MiB of incompressible files. The worker image's raw step fills it; the
 * import ends in `error` with a message naming the full storage and its size, the hosted
 * repository gets no ref, and the attempt's working files are gone.
 */

const run = promisify(execFile);
const STORAGE_MIB = 2;

let deployed: AsDeployed;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let origin: OriginServer;
let storage: string;

beforeAll(async () => {
  deployed = await startAsDeployed();
  storage = join(deployed.fileSystem, 'imports');
  await mkdir(storage, { recursive: true });
  const { uid, gid } = deployed.accessPointUser;
  await run('mount', [
    '-t',
    'tmpfs',
    '-o',
    `size=${STORAGE_MIB}m,uid=${uid},gid=${gid},mode=0755`,
    'tmpfs',
    storage,
  ]);
  git = await gitClient();
  const root = await mkdtemp(join(tmpdir(), 'deployed-enospc-origin-'));
  await makeFixtureRepository(join(root, 'big.git'), { commits: 6, bytesPerCommit: 512 * 1024 });
  origin = await serveGitHttp(root);
  const user = await createUser(deployed.stack.endpointsFile, 'octocat');
  token = (await personalToken(deployed.stack.baseUrl, user.auth, ['repo'])).token;
});

afterAll(async () => {
  if (storage) await run('umount', [storage]).catch(() => undefined);
  await deployed?.stop();
  await origin?.close();
});

describe('an import whose shared file system fills up, as deployed', () => {
  it('ends in error naming the full storage, with no ref written and no working file left', async () => {
    const last = await importToTheEnd(deployed.stack.baseUrl, token, {
      owner: 'octocat',
      name: 'too-big',
      body: { vcs_url: `${origin.url}/big.git` },
      timeoutMs: 180_000,
    });
    expect(last.status, `${JSON.stringify(last)}\n${await deployed.logs()}`).toBe('error');
    expect(last.error_message).toMatch(/^The import's working storage is full: the shared file system at /);
    expect(last.error_message).toContain(`${STORAGE_MIB} MiB`);
    expect(await remoteRefs(git, `${deployed.stack.webUrl}/octocat/too-big.git`)).toEqual([]);
    const left = await readdir(storage, { recursive: true });
    expect(left.filter((path) => path.split('/').length >= 3)).toEqual([]);
  });
});
