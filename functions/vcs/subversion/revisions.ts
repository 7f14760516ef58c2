/**
 * The revision map's raw side for Subversion (`vcs/revision-map.ts`), from svn-all-fast-export's
 * log and marks, while both are there. Its log has one line per ref it moved in a revision:
 *
 * - `progress SVN r<N> branch <ref> = :<mark>`, optionally `# merge from :<mark>…`: a commit
 *   revision N wrote on that ref;
 * - `… = :<mark> # from branch <ref> [at r<M> => r<K>]`: the ref made (or replaced) by a copy of
 *   a whole branch or tag, at the commit copied; a revision that changed nothing else in it writes
 *   no commit there;
 * - `… = :0 # delete`: the ref deleted (its last commit is kept under a backup ref,
 *   `settleDeletedRefs`).
 *
 * A revision maps to the commit it wrote: on `main` (the trunk) when it wrote several, else the
 * first. One that wrote none maps to the commit that holds its state: the commit the branch or
 * tag it copied starts at (the first it made), else the commit that held the branch or tag it
 * deleted (published as `backups/<name>@<N>` when deleted refs are kept). A revision that moved
 * no ref (outside the project) is not in the map, nor one whose commit is not published (it was
 * only on a deleted branch or tag, and the owner chose not to keep those).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runGit } from '../git-command.ts';
import { rawRepositoryPath } from '../origin.ts';
import { readMarks, writeOriginRevisions } from '../revision-map.ts';

/** How a revision's mark was found: a commit it wrote, or the state of a ref it copied or deleted. */
export type LoggedKind = 'wrote' | 'copied' | 'deleted';

/** What a revision maps to in the log. */
export interface LoggedRevision {
  readonly revision: number;
  readonly mark: string;
  readonly kind: LoggedKind;
}

const LINE = /^progress SVN r(\d+) branch (.+?) = :(\d+)(?: # (.*))?$/gm;
const isMain = (ref: string) => /^(?:refs\/heads\/)?main$/.test(ref);

/** Each revision the log names, ascending, with the mark it maps to. */
export function loggedRevisions(log: string): LoggedRevision[] {
  const tips = new Map<string, string>();
  const found = new Map<number, { mark: string; kind: LoggedKind; main: boolean }>();
  const rank: Record<LoggedKind, number> = { wrote: 2, copied: 1, deleted: 0 };
  const note = (revision: number, mark: string, kind: LoggedKind, main: boolean) => {
    const earlier = found.get(revision);
    const better =
      earlier === undefined ||
      rank[kind] > rank[earlier.kind] ||
      (kind === 'wrote' && earlier.kind === 'wrote' && main && !earlier.main);
    if (better) found.set(revision, { mark, kind, main });
  };
  for (const [, number = '', ref = '', mark = '', comment = ''] of log.matchAll(LINE)) {
    const revision = Number(number);
    if (mark === '0') {
      const tip = tips.get(ref);
      tips.delete(ref);
      if (tip !== undefined) note(revision, tip, 'deleted', isMain(ref));
      continue;
    }
    tips.set(ref, mark);
    note(revision, mark, comment.startsWith('from branch') ? 'copied' : 'wrote', isMain(ref));
  }
  return [...found.entries()]
    .sort(([a], [b]) => a - b)
    .map(([revision, { mark, kind }]) => ({ revision, mark, kind }));
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
  // Kept deleted refs keep every commit reachable: only a deleting revision's is checked then.
  const check = !keepDeletedRefs || logged.some((entry) => entry.kind === 'deleted');
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
