/**
 * The authors of a Subversion import: the identities of `raw.git`, which svn-all-fast-export names
 * `user <user@<repository uuid>>` (GitHub's form for Subversion users, who have no email); the
 * username is the author's remote name. A revision without author is `(no author)
 * <no-author@<uuid>>` (`history-findings.ts`): one author like the others.
 */
import { rawRepository } from '../git.ts';
import { gitAuthors } from '../git-authors.ts';
import type { OriginAuthor, RawJob } from '../origin.ts';

export async function subversionAuthors(job: RawJob): Promise<readonly OriginAuthor[]> {
  const raw = await rawRepository(job);
  if (!raw) return []; // converted only once every revision is in the mirror
  return (await gitAuthors(raw.repo, raw.home)).map((author) => ({ ...author, remoteName: author.name }));
}
