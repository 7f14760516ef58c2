import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { makeSvnRepository } from '#local/svn-fixtures';
import { type SvnServer, serveSvn } from '#local/svn-origins';
import { type AsDeployed, startAsDeployed } from '#test/as-deployed';
import { createUser, personalToken } from '#test/fixtures';
import { gitClient, remoteRefs } from '#test/git-client';
import { importToTheEnd } from '#test/import-to-end';

/**
 * A full file system under an import, as deployed (`test/support/as-deployed.ts`).
 * - The shared one: the imports' folder of the file system is a 2 MiB tmpfs (owned by the access
 *   point's user), and the origin's history is 3 MiB of incompressible files. The worker image's
 *   raw step fills it; the import ends in `error` with a message naming the full storage and its
 *   size, the hosted repository gets no ref, and the attempt's working files are gone.
 * - A function's own `/tmp` (Lambda's ephemeral storage, the template's size): left full in a
 *   warm execution environment (as an earlier invocation killed mid-work could leave it), the next
 *   Subversion import's Detect step, which keeps svn's configuration there, ends the import the
 *   same way, naming `/tmp`; a Git import's steps keep nothing there, and it completes.
 */

const run = promisify(execFile);
const STORAGE_MIB = 2;

let deployed: AsDeployed;
let git: Awaited<ReturnType<typeof gitClient>>;
let token: string;
let origin: OriginServer;
let svnOrigin: SvnServer;
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
  await makeFixtureRepository(join(root, 'small.git'), { commits: 3 });
  origin = await serveGitHttp(root);
  await makeSvnRepository(join(root, 'svn'));
  svnOrigin = await serveSvn(join(root, 'svn'));
  const user = await createUser(deployed.stack.endpointsFile, 'octocat');
  token = (await personalToken(deployed.stack.baseUrl, user.auth, ['repo'])).token;
});

afterAll(async () => {
  if (storage) await run('umount', [storage]).catch(() => undefined);
  await deployed?.stop();
  await origin?.close();
  await svnOrigin?.close();
});

/** An import into a new repository `octocat/<name>`, to its end. */
const importNamed = (name: string, vcsUrl: string) =>
  importToTheEnd(deployed.stack.baseUrl, token, {
    owner: 'octocat',
    name,
    body: { vcs_url: vcsUrl },
    timeoutMs: 180_000,
  });

describe('an import whose file system fills up, as deployed', () => {
  it('ends in error naming the full storage, with no ref written and no working file left', async () => {
    const last = await importNamed('too-big', `${origin.url}/big.git`);
    expect(last.status, `${JSON.stringify(last)}\n${await deployed.logs()}`).toBe('error');
    expect(last.error_message).toMatch(/^The import's working storage is full: the shared file system at /);
    expect(last.error_message).toContain(`${STORAGE_MIB} MiB`);
    expect(await remoteRefs(git, `${deployed.stack.webUrl}/octocat/too-big.git`)).toEqual([]);
    const left = await readdir(storage, { recursive: true });
    expect(left.filter((path) => path.split('/').length >= 3)).toEqual([]);
  });

  it("ends in error naming a full /tmp, the function's ephemeral storage", async () => {
    await run('umount', [storage]);
    // Every step's environment is warm and idle after a whole import.
    const warm = await importNamed('warm', `${origin.url}/small.git`);
    expect(warm.status, `${JSON.stringify(warm)}\n${await deployed.logs()}`).toBe('complete');
    const [tmp, ...others] = await deployed.tmpDirs('Detect');
    expect(tmp, 'a warm Detect environment').toBeDefined();
    expect(others).toEqual([]);
    const filler = join(String(tmp), 'filler');
    await run('sh', ['-c', 'dd if=/dev/zero of="$0" bs=1M 2>/dev/null; test -s "$0"', filler]);
    try {
      // A Git import's steps keep nothing in /tmp: it completes.
      const gitImport = await importNamed('no-room-needed', `${origin.url}/small.git`);
      expect(gitImport.status).toBe('complete');
      const last = await importNamed('no-room', `svn://127.0.0.1:${svnOrigin.port}/repo`);
      expect(last.status, `${JSON.stringify(last)}\n${await deployed.logs()}`).toBe('error');
      expect(last.failed_step).toBe('detection');
      expect(last.error_message).toMatch(
        /^The import's working storage is full: \/tmp \(the function's ephemeral storage\) \(\d+ MiB\) has no space left/,
      );
      expect(await remoteRefs(git, `${deployed.stack.webUrl}/octocat/no-room.git`)).toEqual([]);
    } finally {
      await rm(filler, { force: true });
    }
  });
});
