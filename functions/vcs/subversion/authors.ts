/**
 * The authors of a Subversion import: the identities of `raw.git`, which svn-all-fast-export names
 * `user <user@<repository uuid>>` (GitHub's form for Subversion users, who have no email); the
 * username is the author's remote name. A revision without author is `(no author)
 * <no-author@<uuid>>` (`history-findings.ts`): one author like the others.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { gitAuthors } from '../git.ts';
import { prepareHome } from '../git-command.ts';
import { type OriginAuthor, type RawJob, rawRepositoryPath } from '../origin.ts';

export async function subversionAuthors(job: RawJob): Promise<readonly OriginAuthor[]> {
  const home = join(job.workDir, 'home');
  await prepareHome(home);
  const repo = rawRepositoryPath(job.workDir);
  try {
    await stat(join(repo, 'HEAD'));
  } catch {
    return []; // converted only once every revision is in the mirror
  }
  return (await gitAuthors(repo, home)).map((author) => ({ ...author, remoteName: author.name }));
}
