/**
 * How a followed repository's objects grow, sync after sync: a new commit on `main` of a bare
 * repository (the tree of the last, so one new object), and the packs and loose-object folders a
 * repository holds.
 */
import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

const git = async (repo: string, ...args: string[]) =>
  (
    await run('git', ['--git-dir', repo, ...args], {
      env: {
        PATH: process.env.PATH,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_COMMITTER_NAME: 'Ada',
        GIT_COMMITTER_EMAIL: 'ada@example.com',
        GIT_AUTHOR_NAME: 'Ada',
        GIT_AUTHOR_EMAIL: 'ada@example.com',
      },
    })
  ).stdout.trim();

/** Moves `main` of the bare repository `repo` to a new commit of the same tree. */
export async function commitOnMain(repo: string, message: string): Promise<void> {
  const commit = await git(
    repo,
    'commit-tree',
    await git(repo, 'rev-parse', 'main^{tree}'),
    '-p',
    'main',
    '-m',
    message,
  );
  await git(repo, 'update-ref', 'refs/heads/main', commit);
}

/** The repository's packs, and its loose-object folders (`objects/ab`). */
export async function objectFiles(repo: string): Promise<{ packs: number; looseFolders: string[] }> {
  const objects = join(repo, 'objects');
  return {
    packs: (await readdir(join(objects, 'pack'))).filter((name) => name.endsWith('.pack')).length,
    looseFolders: (await readdir(objects)).filter((name) => /^[0-9a-f]{2}$/.test(name)),
  };
}
