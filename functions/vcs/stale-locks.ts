import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Removes the lock files a git killed with its worker leaves in a repository the attempt alone
 * writes (ref locks, `packed-refs.lock`, and the `.lock` of each file named, such as a marks file):
 * one step of an attempt runs at a time, so a lock found here is a dead worker's, and git would
 * refuse to run again beside it ("File exists").
 */
export async function removeStaleLocks(gitDir: string, files: readonly string[] = []): Promise<void> {
  const refs = await readdir(join(gitDir, 'refs'), { recursive: true }).catch(() => [] as string[]);
  const locks = [
    ...files.map((file) => `${file}.lock`),
    join(gitDir, 'packed-refs.lock'),
    ...refs.filter((name) => name.endsWith('.lock')).map((name) => join(gitDir, 'refs', name)),
  ];
  await Promise.all(locks.map((lock) => rm(lock, { force: true })));
}
