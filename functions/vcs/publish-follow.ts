/**
 * What a sync's publish does besides adding and fast-forwarding refs (issue 27, "what the origin
 * did, followed faithfully"): a branch or tag the origin deleted is deleted, or kept as a backup
 * ref when the owner asked (`keep_deleted_refs`); a branch whose new tip does not contain its old
 * tip (a force-push in the origin), and a tag that moved, moves, and its old tip is always kept as
 * a backup ref. Backup refs are named by `backupRefName` (`refs/backups/…`), which publishing never
 * lists, so a later publish leaves them alone.
 *
 * The plan is computed once per attempt, from the hosted refs before anything changed, and saved
 * in `planFile`; the backups are written before any ref moves. A publish call that is interrupted
 * and called again reads the same plan and writes the same backups (idempotent), so the report
 * names every change, whichever call made it.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { backupRefName, type SyncRefChange, type SyncRefChanges } from '#domain/import-sync';
import { GitFailed, runGit } from './git-command.ts';
import { type GitJob, localRun as local } from './git-job.ts';

export interface FollowPublish {
  /** Deleted branches and tags are kept as backup refs. */
  readonly keepDeletedRefs: boolean;
  /** Where the attempt's plan is kept between publish calls (in the attempt's directory). */
  readonly planFile: string;
}

/**
 * The deletions and rewrites of this publish (planned on the first call), with their backup refs
 * written into the hosted repository. `hosted` and `wanted` are the branches and tags before the
 * call, by ref name.
 */
export async function planFollowedRefs(
  sourceDir: string,
  hostedPath: string,
  hosted: ReadonlyMap<string, string>,
  wanted: ReadonlyMap<string, string>,
  follow: FollowPublish,
  job: GitJob,
): Promise<SyncRefChanges> {
  const plan = (await savedPlan(follow.planFile)) ?? (await newPlan(sourceDir, hosted, wanted, follow, job));
  const backups = [...plan.deleted, ...plan.rewritten].filter((change) => change.backupRef !== null);
  if (backups.length > 0) {
    const commands = backups.map((change) => `update ${change.backupRef} ${change.oldTip}\n`).join('');
    await runGit(['update-ref', '--stdin'], { ...local(hostedPath, job), input: commands });
  }
  return plan;
}

async function newPlan(
  sourceDir: string,
  hosted: ReadonlyMap<string, string>,
  wanted: ReadonlyMap<string, string>,
  follow: FollowPublish,
  job: GitJob,
): Promise<SyncRefChanges> {
  const deleted: SyncRefChange[] = [];
  const rewritten: SyncRefChange[] = [];
  for (const [ref, oldTip] of [...hosted].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const newTip = wanted.get(ref);
    if (newTip === undefined)
      deleted.push({
        ref,
        oldTip,
        newTip: null,
        backupRef: follow.keepDeletedRefs ? backupRefName(ref, oldTip) : null,
      });
    else if (newTip !== oldTip && !(await contains(sourceDir, ref, oldTip, newTip, job)))
      rewritten.push({ ref, oldTip, newTip, backupRef: backupRefName(ref, oldTip) });
  }
  const plan = { deleted, rewritten };
  const temporary = `${follow.planFile}.${randomBytes(4).toString('hex')}`;
  await writeFile(temporary, JSON.stringify(plan));
  await rename(temporary, follow.planFile);
  return plan;
}

/**
 * Whether a ref's new tip keeps its old tip: a branch that fast-forwards. A tag that points
 * elsewhere never does (tags are meant not to move). The source holds the whole new history, so an
 * old tip it lacks is no ancestor of the new one.
 */
async function contains(
  sourceDir: string,
  ref: string,
  oldTip: string,
  newTip: string,
  job: GitJob,
): Promise<boolean> {
  if (!ref.startsWith('refs/heads/')) return false;
  try {
    await runGit(['merge-base', '--is-ancestor', oldTip, newTip], local(sourceDir, job));
    return true;
  } catch (error) {
    // 1: not an ancestor; 128: the old tip is not in the source (so not in the new history).
    if (error instanceof GitFailed && !error.timedOut && (error.exitCode === 1 || error.exitCode === 128))
      return false;
    throw error;
  }
}

async function savedPlan(file: string): Promise<SyncRefChanges | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as SyncRefChanges;
  } catch {
    return undefined;
  }
}
