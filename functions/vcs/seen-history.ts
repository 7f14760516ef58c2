/**
 * What a sync's raw history held before it fetched: the objects raw.git's branches and tags named
 * when the attempt before handed its directory on (`seen-tips.<attempt>`, written before the first
 * chunk fetches, so a retried chunk finds the same list). That attempt's raw step was finished and
 * had recorded every author and looked at every object of it, so a sync's passes over authors and
 * large files read only what these tips do not reach (`git log … --not <tips>`): their cost grows
 * with what is new, not with the whole history. Origin-independent: every adapter's raw history is
 * a Git repository. An attempt without the file (an import, a sync started afresh) reads everything.
 */
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GitFailed, runGit } from './git-command.ts';
import { type GitJob, localRun as local } from './git-job.ts';
import { rawRepositoryPath } from './origin.ts';

const PREFIX = 'seen-tips.';
const seenFile = (workDir: string, attempt: number) => join(workDir, `${PREFIX}${attempt}`);

/**
 * Records the raw history's tips in `workDir` for `attempt` (replacing older attempts' lists);
 * nothing when there is no raw history to reuse. Call on the directory before the sync fetches.
 */
export async function recordSeenTips(workDir: string, attempt: number, job: GitJob): Promise<void> {
  for (const name of await readdir(workDir).catch(() => []))
    if (name.startsWith(PREFIX)) await rm(join(workDir, name), { force: true });
  const repo = rawRepositoryPath(workDir);
  if (
    !(await stat(join(repo, 'HEAD')).then(
      () => true,
      () => false,
    ))
  )
    return;
  await writeFile(seenFile(workDir, attempt), tipsText(await refTips(repo, job)));
}

/** The objects a repository's branches and tags name, each once. */
export async function refTips(repo: string, job: GitJob): Promise<string[]> {
  const out = await runGit(
    ['for-each-ref', '--format=%(objectname)', 'refs/heads/', 'refs/tags/'],
    local(repo, job),
  );
  return [...new Set(out.toString('utf8').split('\n').filter(Boolean))];
}

/** Tips as the files that hold them say them, one a line. */
export const tipsText = (tips: readonly string[]): string => tips.map((tip) => `${tip}\n`).join('');

/** Tips written by `tipsText`; undefined when the file is missing. */
export const readTips = (file: string): Promise<string[] | undefined> =>
  readFile(file, 'utf8').then(
    (text) => text.split('\n').filter(Boolean),
    () => undefined,
  );

/** The tips recorded for `attempt`; undefined when none were (everything is new). */
export const seenTips = (workDir: string, attempt: number): Promise<readonly string[] | undefined> =>
  readTips(seenFile(workDir, attempt));

/**
 * Runs a `git log`/`rev-list` over what `seen` does not reach (`run` gets the extra arguments and
 * standard input), or over everything when `seen` is undefined or names an object raw.git no
 * longer has (a tip of a deleted ref that `gc --auto` pruned: git refuses it as a bad object).
 */
export async function excludingSeen<T>(
  seen: readonly string[] | undefined,
  run: (args: readonly string[], input?: string) => Promise<T>,
): Promise<T> {
  if (!seen) return run([]);
  try {
    return await run(['--stdin'], seen.map((tip) => `^${tip}\n`).join(''));
  } catch (error) {
    if (!(error instanceof GitFailed) || error.timedOut) throw error;
    return run([]);
  }
}

/**
 * Whether a blob over `thresholdBytes` is among the objects the refs reach that `seen` does not
 * (`rev-list --filter=blob:limit` leaves such blobs out and names them with `~`). When the attempt
 * before found no large file anywhere in raw.git, this answers the large-file question of a sync:
 * any large blob now in raw.git came with what it fetched.
 */
export async function newLargeBlob(
  rawDir: string,
  thresholdBytes: number,
  seen: readonly string[],
  job: GitJob,
): Promise<boolean> {
  const out = await excludingSeen(seen, (exclude, input) =>
    runGit(
      [
        'rev-list',
        '--all',
        ...exclude,
        '--objects',
        '--no-object-names',
        `--filter=blob:limit=${thresholdBytes + 1}`,
        '--filter-print-omitted',
      ],
      { ...local(rawDir, job), input, maxStdoutBytes: 1024 * 1024 * 1024 },
    ),
  );
  return out
    .toString('latin1')
    .split('\n')
    .some((line) => line.startsWith('~'));
}
