/**
 * Git's object checks on the conversion's output as it arrives, so that the rewrite step need not
 * run `git fsck --strict` over the whole raw history (`history-check.ts`), which for a sync would
 * check every earlier object again (6 s of a 5,000-changeset sync, as long as for the import).
 * fast-import writes one self-contained pack per run (`fastimport.unpackLimit=0`: never loose
 * objects); `git index-pack --strict` (what `fetch.fsckObjects` runs on what a fetch receives,
 * with the same leniency) checks each new pack. raw.git carries `CHECKED_ON_ARRIVAL` only while
 * every pack in it was checked so: the marker is withdrawn before a run and put back only when the
 * run's packs pass and every earlier one had. A pack that fails leaves it withdrawn, and the
 * rewrite step's whole check names what git refused, as before.
 */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CHECKED_ON_ARRIVAL, markCheckedOnArrival } from '#vcs/arrival-check';
import { fsckLeniency } from '#vcs/fsck-policy';
import { GitFailed, runGit } from '#vcs/git-command';

const packDir = (gitRepo: string) => join(gitRepo, 'objects', 'pack');

/** The names of the finished packs in `gitRepo`. */
export const packNames = async (gitRepo: string): Promise<ReadonlySet<string>> =>
  new Set(
    (await readdir(packDir(gitRepo)).catch(() => [] as string[])).filter(
      (name) => name.startsWith('pack-') && name.endsWith('.pack'),
    ),
  );

/** Whether every object of `gitRepo` was checked so far (before a run; withdraws the marker). */
export async function checkedSoFar(gitRepo: string, firstRun: boolean): Promise<boolean> {
  const checked = firstRun
    ? (await packNames(gitRepo)).size === 0
    : await readdir(gitRepo).then(
        (names) => names.includes(CHECKED_ON_ARRIVAL),
        () => false,
      );
  await markCheckedOnArrival(gitRepo, false);
  return checked;
}

/** Checks the packs a run added (not in `before`); marks raw.git checked when they pass and `earlier` held. */
export async function checkArrivedPacks(
  run: { readonly gitRepo: string; readonly home: string; readonly timeoutMs: number },
  before: ReadonlySet<string>,
  earlier: boolean,
): Promise<void> {
  if (!earlier) return;
  const strict = `--strict=${fsckLeniency('fsck')
    .map(([key, value]) => `${key.replace(/^fsck\./, '')}=${value}`)
    .join(',')}`;
  for (const name of await packNames(run.gitRepo)) {
    if (before.has(name)) continue;
    const index = join(run.home, 'arrival-check.idx');
    try {
      await runGit(['index-pack', strict, '-o', index, join(packDir(run.gitRepo), name)], {
        cwd: run.gitRepo,
        home: run.home,
        transport: 'local',
        timeoutMs: run.timeoutMs,
      });
    } catch (error) {
      if (error instanceof GitFailed && !error.timedOut) return; // the rewrite step's check tells what
      throw error;
    } finally {
      await rm(index, { force: true });
    }
  }
  await markCheckedOnArrival(run.gitRepo, true);
}
