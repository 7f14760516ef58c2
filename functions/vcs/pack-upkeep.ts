/**
 * A followed repository gains one pack per sync: the raw history's fetch and the hosted
 * repository's push each keep what arrives as the pack it came in (`fetch.unpackLimit`,
 * `receive.unpackLimit`), which costs far less than writing it as loose objects. Left alone, the
 * packs would grow one per sync, and every object lookup reads each pack's index. Past
 * `MAX_PACKS`, a geometric repack (`git repack --geometric=2 -d`) rolls the small packs into one
 * and leaves the big ones alone. Its cost follows the new packs, not the history: 20 packs of a
 * sync each over Lua's whole history took 45 ms.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { runGit } from './git-command.ts';
import { type GitJob, localRun } from './git-job.ts';

/** Packs a repository may hold before the small ones are rolled up. */
export const MAX_PACKS = 16;

/** Rolls up the small packs of `repo` once it holds more than `MAX_PACKS`. */
export async function keepPacksFew(repo: string, job: GitJob): Promise<void> {
  const names = await readdir(join(repo, 'objects', 'pack')).catch(() => []);
  if (names.filter((name) => name.endsWith('.pack')).length <= MAX_PACKS) return;
  await runGit(['repack', '-d', '-q', '--geometric=2'], localRun(repo, job));
}
