/**
 * A local repository's HEAD, read from its HEAD file instead of starting git for it (every
 * repository here is made by the image's git, whose files backend writes `ref: refs/heads/<name>`
 * there), and moved only when it names another branch.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type GitRun, runGit } from './git-command.ts';

/** The branch HEAD names; undefined when it is detached, missing or unreadable. */
export async function headBranch(repoDir: string): Promise<string | undefined> {
  const text = await readFile(join(repoDir, 'HEAD'), 'utf8').catch(() => '');
  return /^ref: refs\/heads\/([^\n]+)\n?$/.exec(text)?.[1];
}

/** Points HEAD at `branch`, unless it already names it. */
export async function pointHead(repoDir: string, branch: string, run: GitRun): Promise<void> {
  if ((await headBranch(repoDir)) === branch) return;
  await runGit(['symbolic-ref', 'HEAD', `refs/heads/${branch}`], run);
}
