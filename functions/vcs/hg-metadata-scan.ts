/**
 * Whether a raw history holds a `.hg` folder or file in any spelling (`hg_metadata`,
 * `#domain/unstorable-paths`): the one component the history step drops that git's object checks
 * do not flag (git stores `.hg`; Mercurial refuses to check it out), so `checkHistory` cannot say.
 *
 * One `git log` of the paths each commit adds or changes (`-t`: folders too; a merge: the paths
 * that differ from every parent, `-c`). A path in a commit's tree is either listed there or in a
 * parent's tree, so every path of every tree is listed at the first commit that holds it.
 *
 * Its cost follows what is new: a scan that finds none records the tips it read beside raw.git
 * (`hg-free-tips`), and the next one (a sync's, after it fetched) reads only what those tips do not
 * reach. The tips name objects, and every object they reach was read and found clean, in whatever
 * repository holds them now; one raw.git no longer has (a tip `gc --auto` pruned) makes the scan
 * read everything (`excludingSeen`). A scan that finds one leaves the file as it was, so a history
 * holding one is read again from the last clean tips each time, as its rewrite reads it whole.
 */
import { dirname, join } from 'node:path';
import { componentReason } from '#domain/unstorable-paths';
import { runGit } from './git-command.ts';
import { type GitJob, localRun as local } from './git-job.ts';
import { excludingSeen, readTips, refTips, tipsText } from './seen-history.ts';
import { writeWhole } from './whole-file.ts';

/** Where the tips of the last scan that found no `.hg` are kept: beside the raw repository. */
const hgFreeTipsFile = (rawDir: string) => join(dirname(rawDir), 'hg-free-tips');

/** Whether a path of the raw history `rawDir` has a `.hg` component in any spelling. */
export async function holdsHgMetadata(rawDir: string, job: GitJob): Promise<boolean> {
  const memory = hgFreeTipsFile(rawDir);
  const tips = await refTips(rawDir, job);
  const out = await excludingSeen(await readTips(memory), (exclude, input) =>
    runGit(
      ['log', '--all', ...exclude, '--format=', '-z', '--name-only', '-t', '-c', '--root', '--no-renames'],
      { ...local(rawDir, job), input, maxStdoutBytes: 1024 * 1024 * 1024 },
    ),
  );
  const found = out
    .toString('utf8')
    .split('\0')
    .some((path) => path.split('/').some((name) => componentReason(name) === 'hg_metadata'));
  if (!found) await writeWhole(memory, tipsText(tips));
  return found;
}
