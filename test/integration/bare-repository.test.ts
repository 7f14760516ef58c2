import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { lfsObjectPath } from '#vcs/hosted-paths';
import { ensureBareRepository, isBareRepository } from '#vcs/http-backend';

const run = promisify(execFile);
const OID = 'ab'.repeat(32);

/** What git itself says of the directory: a bare repository with HEAD on `main`. */
async function gitSays(path: string): Promise<{ bare: string; head: string }> {
  const env = { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: tmpdir() };
  const bare = (
    await run('git', ['--git-dir', path, 'rev-parse', '--is-bare-repository'], { env })
  ).stdout.trim();
  const head = (await run('git', ['--git-dir', path, 'symbolic-ref', 'HEAD'], { env })).stdout.trim();
  return { bare, head };
}

describe('ensureBareRepository', () => {
  it('makes one repository of several first requests at once', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'bare-')), 'owner', 'repo.git');
    await Promise.all(Array.from({ length: 8 }, () => ensureBareRepository(path, 'main')));
    expect(await isBareRepository(path)).toBe(true);
    expect(await gitSays(path)).toEqual({ bare: 'true', head: 'refs/heads/main' });
  });

  it('makes whole what a killed `git init` left (HEAD written, objects/ not yet): no repository to git', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'bare-')), 'owner', 'repo.git');
    await mkdir(dirname(path), { recursive: true });
    await run('git', ['init', '--bare', '--quiet', path]);
    await rm(join(path, 'objects'), { recursive: true });
    expect(await isBareRepository(path)).toBe(false);
    await ensureBareRepository(path, 'main');
    expect(await gitSays(path)).toEqual({ bare: 'true', head: 'refs/heads/main' });
  });

  it('makes a repository of a directory holding only LFS objects, keeping them, at once too', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'bare-')), 'owner', 'repo.git');
    const object = lfsObjectPath(path, OID);
    await mkdir(dirname(object), { recursive: true });
    await writeFile(object, 'object');
    expect(await isBareRepository(path)).toBe(false);
    await Promise.all(Array.from({ length: 8 }, () => ensureBareRepository(path, 'main')));
    expect(await gitSays(path)).toEqual({ bare: 'true', head: 'refs/heads/main' });
    expect(await readFile(object, 'utf8')).toBe('object');
  });
});
