/**
 * The revision map's raw side for Subversion (`vcs/revision-map.ts`), from svn-all-fast-export's
 * log and marks, while both are there. Its log has one line per ref it moved in a revision:
 *
 * - `progress SVN r<N> branch <ref> = :<mark>`, optionally `# merge from :<mark>…`: a commit
 *   revision N wrote on that ref;
 * - `… = :<mark> # from branch <ref> [at r<M> => r<K>]`: the ref created (or replaced) at the
 *   commit it is copied from, before revision N's own commit on it (`--svn-branches` makes one
 *   for every copy, so the copy has its revision's message and date);
 * - `… = :0 # delete`: the ref deleted (svn-all-fast-export keeps its last commit under a backup
 *   ref, `settleDeletedRefs`).
 *
 * A revision maps to the commit it wrote: on `main` (the trunk) when it wrote several, else the
 * first. One that wrote none but deleted a branch or tag maps to the commit that holds what it
 * deleted (published as `backups/<name>@<N>` when deleted refs are kept). A revision that moved
 * no ref (outside the project) is not in the map, nor one whose commit is not published (it was
 * only on a deleted branch or tag, and the owner chose not to keep those).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runGit } from '../git-command.ts';
import { rawRepositoryPath } from '../origin.ts';
import { readMarks, writeOriginRevisions } from '../revision-map.ts';

/** What a revision mapped to in the log: a mark it wrote, or the mark of what it deleted. */
export interface LoggedRevision {
  readonly revision: number;
  readonly mark: string;
  /** True when the revision wrote no commit and `mark` holds the state it deleted. */
  readonly deleted: boolean;
}

const LINE = /^progress SVN r(\d+) branch (.+?) = :(\d+)(?: # (.*))?$/gm;
const isMain = (ref: string) => /^(?:refs\/heads\/)?main$/.test(ref);

/** Each revision the log names, ascending, with the mark it maps to. */
export function loggedRevisions(log: string): LoggedRevision[] {
  const tips = new Map<string, string>();
  const wrote = new Map<number, { mark: string; main: boolean }>();
  const deleted = new Map<number, string>();
  for (const [, number = '', ref = '', mark = '', note = ''] of log.matchAll(LINE)) {
    const revision = Number(number);
    if (note.startsWith('from branch')) {
      tips.set(ref, mark);
      continue;
    }
    if (note === 'delete' || mark === '0') {
      const tip = tips.get(ref);
      tips.delete(ref);
      if (tip !== undefined && !deleted.has(revision)) deleted.set(revision, tip);
      continue;
    }
    tips.set(ref, mark);
    const earlier = wrote.get(revision);
    if (earlier === undefined || (isMain(ref) && !earlier.main))
      wrote.set(revision, { mark, main: isMain(ref) });
  }
  const revisions = [...new Set([...wrote.keys(), ...deleted.keys()])].sort((a, b) => a - b);
  return revisions.flatMap((revision): LoggedRevision[] => {
    const made = wrote.get(revision);
    if (made !== undefined) return [{ revision, mark: made.mark, deleted: false }];
    const state = deleted.get(revision);
    return state === undefined ? [] : [{ revision, mark: state, deleted: true }];
  });
}

/**
 * Writes the raw map from the log of `output` and its marks. Run after the deleted refs are
 * settled: a commit counts only when a branch or tag still reaches it (a deleting revision's, or,
 * when the owner chose not to keep deleted refs, one written only on a branch later deleted).
 */
export async function saveSvnRevisions(
  workDir: string,
  output: string,
  home: string,
  keepDeletedRefs: boolean,
): Promise<void> {
  const gitRepo = rawRepositoryPath(workDir);
  const log = await readFile(join(workDir, `log-${output}`), 'utf8').catch(() => '');
  const marks = await readMarks(join(gitRepo, `marks-${output}`));
  const logged = loggedRevisions(log).flatMap((entry) => {
    const commit = marks.get(entry.mark);
    return commit === undefined ? [] : [{ ...entry, commit }];
  });
  // Kept deleted refs keep every commit written reachable: only a deleting revision's is checked.
  const check = !keepDeletedRefs || logged.some((entry) => entry.deleted);
  const published = check ? await reachable(gitRepo, home) : undefined;
  await writeOriginRevisions(
    gitRepo,
    logged
      .filter((entry) => published === undefined || published.has(entry.commit))
      .map((entry) => ({ originRevision: String(entry.revision), commit: entry.commit })),
  );
}

/** Every commit a branch or tag reaches: what the push publishes. */
async function reachable(gitRepo: string, home: string): Promise<Set<string>> {
  const out = await runGit(['rev-list', '--branches', '--tags'], {
    cwd: gitRepo,
    home,
    transport: 'local',
    timeoutMs: 600_000,
    maxStdoutBytes: 512 * 1024 * 1024,
  });
  return new Set(out.toString('utf8').split('\n').filter(Boolean));
}
