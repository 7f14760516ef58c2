/**
 * The blobs a repository stores, by size, from one pass over its object database (reachable or
 * not, alternates included: a superset of what any ref reaches), without reading their content.
 */
import { runGit } from './git-command.ts';
import { type GitJob, localRun } from './git-job.ts';

/** Blob id → size of every stored blob whose size `wanted` keeps. */
export async function blobSizes(
  repoDir: string,
  job: GitJob,
  wanted: (bytes: number) => boolean,
): Promise<Map<string, number>> {
  const out = await runGit(
    [
      'cat-file',
      '--batch-all-objects',
      '--unordered',
      '--batch-check=%(objecttype) %(objectname) %(objectsize)',
    ],
    { ...localRun(repoDir, job), maxStdoutBytes: 2 * 1024 * 1024 * 1024 },
  );
  const kept = new Map<string, number>();
  for (const line of out.toString('latin1').split('\n')) {
    if (!line.startsWith('blob ')) continue;
    const [, oid, size] = line.split(' ');
    const bytes = Number(size);
    if (oid && wanted(bytes)) kept.set(oid, bytes);
  }
  return kept;
}
