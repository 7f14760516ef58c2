/**
 * What a Mercurial import records in the job's findings (`#vcs/findings`), once the refs are
 * written: every kind the adapter looks for is saved, even when nothing was found.
 *
 * - `renamed_refs`: refs that did not get the name they asked for (`#domain/ref-names`).
 * - `closed_branches`: named branches whose heads are all closed; they are kept, their tip under
 *   the branch's ref (and any other closed head under `hg/<branch>/<12 hex>`).
 * - `hg_subrepos`: the subrepositories named by `.hgsub` (and `.hgsubstate`) at every changeset a
 *   ref points at; they are not followed, `.hgsub` and `.hgsubstate` stay as files.
 * - `authorless_commits`: changesets whose user has neither a name nor an email, and the identity
 *   they got, `(no author) <no-author@<origin host>>`.
 * - `unstorable_paths`: the paths the conversion left out of the tree (`unstorable-paths.ts`).
 */
import type { AssignedRef } from '#domain/ref-names';
import { refRenames } from '#domain/ref-names';
import { saveFinding, saveRenamedRefs } from '#vcs/findings';
import type { HgRefRequest, HgRefsResult } from './refs.ts';
import { droppedPaths } from './unstorable-paths.ts';

export async function saveHgFindings(workDir: string, gitRepo: string, result: HgRefsResult): Promise<void> {
  await saveRenamedRefs(workDir, refRenames(result.assigned));
  await saveFinding(workDir, 'closed_branches', closedBranches(result.assigned));
  await saveFinding(
    workDir,
    'hg_subrepos',
    result.subrepos.map(({ path, source, revision, kind, changeset }) => ({
      path,
      source,
      revision,
      kind,
      changeset,
    })),
  );
  await saveFinding(
    workDir,
    'authorless_commits',
    result.authorless.listed.map(({ changeset, user, author }) => ({ changeset, user, author })),
    result.authorless.count,
  );
  await saveFinding(workDir, 'unstorable_paths', await droppedPaths(gitRepo));
}

/** Every closed branch is kept today (`kept` says so, for a choice to drop them later). */
const closedBranches = (assigned: readonly AssignedRef<HgRefRequest>[]) =>
  assigned
    .filter((entry) => entry.kind === 'branch' && entry.closed === true)
    .map((entry) => ({ origin_name: entry.name, ref: entry.ref, kept: true }));
