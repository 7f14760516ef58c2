/**
 * Git's object checks on a Mercurial conversion as it arrives (`vcs/mercurial/arrival.ts`): a
 * history whose every pack passes `git index-pack --strict` is marked checked, so the rewrite step
 * does not check it whole again; a path the conversion stores but Git's checks refuse (`.git`
 * followed by an HFS-ignorable ZERO WIDTH NON-JOINER, which Mercurial accepts) leaves the mark off,
 * and the rewrite step fails naming it, as before.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OriginServer } from '#local/git-origins';
import { serveHg } from '#local/hg-origins';
import { CHECKED_ON_ARRIVAL } from '#vcs/arrival-check';
import { prepareHome } from '#vcs/git-command';
import { rewriteHistory } from '#vcs/history';
import { mercurialAdapter } from '#vcs/mercurial/adapter';
import { rawRepositoryPath } from '#vcs/origin';

const exec = promisify(execFile);
const HFS_DOTGIT = '.git\u200c';

let root: string;
const origins: OriginServer[] = [];

async function origin(name: string, path: string): Promise<OriginServer> {
  const repo = join(root, name);
  const env = {
    PATH: process.env.PATH,
    HOME: root,
    HGRCPATH: '',
    HGPLAIN: '1',
    HGUSER: 'Ada <ada@example.com>',
  };
  await exec('hg', ['init', repo], { env });
  await mkdir(join(repo, path, '..'), { recursive: true });
  await writeFile(join(repo, path), 'content\n');
  await exec('hg', ['-R', repo, 'commit', '-q', '-A', '-m', 'one'], { env, cwd: repo });
  const served = await serveHg({ repo });
  origins.push(served);
  return served;
}

async function imported(server: OriginServer) {
  const workDir = await mkdtemp(join(root, 'job-'));
  const job = { url: `${server.url}/`, allowedAddresses: ['127.0.0.1'], workDir };
  for (let chunk = 0; chunk < 10; chunk += 1)
    if ((await mercurialAdapter().importRawChunk(job, 60_000, () => undefined)).done) break;
  const home = join(root, 'home');
  await prepareHome(home, [rawRepositoryPath(workDir), join(workDir, 'out.git')]);
  const rewrite = () =>
    rewriteHistory(
      rawRepositoryPath(workDir),
      join(workDir, 'out.git'),
      { authors: [], lfs: 'none', thresholdBytes: 1_000_000 },
      { home, timeoutMs: 60_000 },
    );
  return { marked: (await readdir(rawRepositoryPath(workDir))).includes(CHECKED_ON_ARRIVAL), rewrite };
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hg-arrival-'));
});
afterAll(async () => {
  await Promise.all(origins.map((server) => server.close()));
  await rm(root, { recursive: true, force: true });
});

describe('the checks of a Mercurial conversion as it arrives', () => {
  it('marks a history whose packs pass as checked', async () => {
    const result = await imported(await origin('plain', 'docs/readme.txt'));
    expect(result.marked).toBe(true);
    await expect(result.rewrite()).resolves.toBeDefined();
  }, 60_000);

  it('leaves out a path Git refuses before it reaches Git, so the rest arrives checked and marked', async () => {
    // Before paths Git cannot store were left out (issue 28), this history failed its check.
    const result = await imported(await origin('hostile', `${HFS_DOTGIT}/config`));
    expect(result.marked).toBe(true);
    await expect(result.rewrite()).resolves.toBeDefined();
  }, 60_000);
});
