/**
 * The origin's HEAD, for a raw history that `clone --bare` did not make (a fetch by depth, a
 * sync): raw.git's HEAD names the branch the origin's HEAD names, as a fresh clone's would.
 */
import { type GitRun, runGit } from './git-command.ts';
import { pointHead } from './repository-head.ts';

/** What an `ls-remote` through the job's session runs with (`git.ts`'s session). */
export interface HeadSession {
  readonly args: readonly string[];
  readonly run: Pick<GitRun, 'env' | 'secret'>;
  readonly home: string;
}

/** The branch the origin's HEAD names (`ls-remote --symref`), or null (empty, or detached). */
export async function remoteHeadBranch(
  url: string,
  repo: string,
  session: HeadSession,
): Promise<string | null> {
  const out = await runGit([...session.args, 'ls-remote', '--symref', '--', url, 'HEAD'], {
    cwd: repo,
    home: session.home,
    transport: 'network',
    timeoutMs: 60_000,
    ...session.run,
  });
  const match = /^ref: refs\/heads\/(\S+)\tHEAD$/m.exec(out.toString('utf8'));
  return match?.[1] ?? null;
}

/** Points raw.git's HEAD at `branch`; left as it is when the origin names none. */
export async function pointHeadAt(repo: string, home: string, branch: string | null): Promise<void> {
  if (branch === null) return;
  await pointHead(repo, branch, { cwd: repo, home, transport: 'local', timeoutMs: 30_000 });
}
