/**
 * The import's push step: make the hosted bare repository's branches and tags equal to the
 * rewritten (or raw-mirrored) repository's, then store its Git LFS objects. Bounded: each call
 * pushes batches of refs until its time budget is spent and says whether it is done; the next call
 * recomputes what is left from the refs the hosted repository already has at the right ids, so
 * no cursor is kept and an interrupted call loses at most one batch.
 *
 * Only `refs/heads/*` and `refs/tags/*` are published (never `refs/replace/*`, `refs/notes/*`,
 * `refs/original/*`). Updates are forced and refs gone from the source are deleted, so publishing
 * a new rewrite over an earlier one (an author mapped after `complete`) replaces it. A sync's
 * publish keeps what it deletes or rewrites as backup refs first (`publish-follow.ts`); other refs
 * of the hosted repository (those backups) are never touched.
 *
 * What a publish stores, Git objects and Git LFS objects (in the local store or uploaded to S3)
 * alike, is held to the import's limits: checked on the source before anything is written, and
 * the hosted repository's growth watched while git writes it.
 */

import { copyFile, link, mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { SyncRefChanges } from '#domain/import-sync';
import { runGit } from './git-command.ts';
import { type GitJob, localRun as local } from './git-job.ts';
import { hiddenPaths, stepFailure } from './git-words.ts';
import { branchesAndTags, defaultBranchOf } from './history.ts';
import { isLfsOid } from './hosted-paths.ts';
import { ensureBareRepository } from './http-backend.ts';
import type { LfsStore } from './lfs-store.ts';
import { directorySize, type ImportLimits, importLimits, oversizeError, withinSize } from './limits.ts';
import { keepPacksFew } from './pack-upkeep.ts';
import { type FollowPublish, planFollowedRefs } from './publish-follow.ts';
import { pointHead } from './repository-head.ts';
import { repositorySizeKiB } from './repository-size.ts';

/** The limits default to the service's (`IMPORT_MAX_BYTES`, `IMPORT_MAX_OBJECTS`). */
export interface PublishOptions extends Partial<ImportLimits> {
  /** Time after which no new batch starts (a batch already started runs to its end). */
  readonly budgetMs: number;
  /** Overall push progress, 0–100, never decreasing within a call; 100 once done. */
  readonly onPercent?: (percent: number) => void;
  /** Refs per `git push` (default 200). */
  readonly refsPerPush?: number;
  /** Where LFS objects go (the hosted repository's store) and whose they are. */
  readonly lfs: { readonly store: Pick<LfsStore, 'put'>; readonly owner: string; readonly repo: string };
  /** A sync: deletions and rewrites in the origin keep backups and are reported (`publish-follow.ts`). */
  readonly follow?: FollowPublish;
}

export interface PublishResult {
  readonly done: boolean;
  /** Branches and tags at the right id in the hosted repository. */
  readonly pushed: number;
  /** Branches and tags to publish. */
  readonly total: number;
  readonly defaultBranch: string;
  /** The hosted repository's `size` in KiB (`repository-size.ts`), as a push reports it. */
  readonly sizeKiB: number;
  /** A sync's deleted and rewritten refs (with `follow` only). */
  readonly refChanges?: SyncRefChanges;
}

const WRITING = /Writing objects:\s+(\d+)%/;

/**
 * The hosted repository keeps what a push brings as the pack it came as (as the Git front end does
 * for a client's push, `git-limits.ts`): exploding it into loose objects took half of a sync's push.
 */
const RECEIVE_PACK = '--receive-pack=git -c receive.unpackLimit=1 receive-pack';

/**
 * One bounded call of the push step (see the module comment). Fails with the user's message
 * (`OriginFailed`): a failed git call as `Publishing to the repository failed (git …): <git's
 * words>`, and, before writing anything, when the source's Git objects and LFS objects together
 * pass `maxBytes` or its objects pass `maxObjects`; a push that writes more than `maxBytes` into
 * the hosted repository is killed.
 */
export async function publish(
  sourceDir: string,
  hostedPath: string,
  options: PublishOptions,
  job: GitJob,
): Promise<PublishResult> {
  try {
    return await publishWithin(sourceDir, hostedPath, options, job);
  } catch (error) {
    throw stepFailure(error, 'Publishing to the repository', hiddenPaths(job, sourceDir, hostedPath));
  }
}

async function publishWithin(
  sourceDir: string,
  hostedPath: string,
  options: PublishOptions,
  job: GitJob,
): Promise<PublishResult> {
  const started = Date.now();
  const limits = importLimits(options);
  const objects = await lfsObjects(sourceDir);
  const lfsBytes = objects.reduce((sum, object) => sum + object.size, 0);
  if ((await directorySize(join(sourceDir, 'objects'))) + lfsBytes > limits.maxBytes)
    throw oversizeError(limits.maxBytes);
  // Its object count was checked by the history step that wrote it (`history.ts`).
  const hostedBefore = await directorySize(join(hostedPath, 'objects'));
  let lfsStored = 0;
  return withinSize(
    limits.maxBytes,
    async () => (await directorySize(join(hostedPath, 'objects'))) - hostedBefore + lfsStored,
    (signal) =>
      publishRefsAndObjects(
        sourceDir,
        hostedPath,
        options,
        { ...job, signal },
        {
          started,
          objects,
          onStored: (bytes) => {
            lfsStored += bytes;
          },
        },
      ),
  );
}

/** What `publish` measured before writing: when it started, the LFS objects to store, and who counts them. */
interface PublishCall {
  readonly started: number;
  readonly objects: readonly LfsObject[];
  readonly onStored: (bytes: number) => void;
}

async function publishRefsAndObjects(
  sourceDir: string,
  hostedPath: string,
  options: PublishOptions,
  job: GitJob,
  { started, objects, onStored }: PublishCall,
): Promise<PublishResult> {
  const defaultBranch = await defaultBranchOf(sourceDir);
  // Made as the Git front end makes it on a first push: beside its place and renamed into it, so a
  // worker killed while making it leaves nothing half-made.
  await ensureBareRepository(hostedPath, defaultBranch);
  const [wanted, hostedBefore] = await Promise.all([
    branchesAndTags(sourceDir, job),
    branchesAndTags(hostedPath, job),
  ]);
  const defaultRef = `refs/heads/${defaultBranch}`;
  const total = wanted.size;
  const batchSize = Math.max(1, options.refsPerPush ?? 200);
  let lastPercent = -1;
  const report = (percent: number) => {
    const rounded = Math.min(100, Math.floor(percent));
    if (rounded > lastPercent) {
      lastPercent = rounded;
      options.onPercent?.(rounded);
    }
  };

  const refChanges = options.follow
    ? await planFollowedRefs(sourceDir, hostedPath, hostedBefore, wanted, options.follow, job)
    : undefined;
  const changes = refChanges ? { refChanges } : {};
  // The hosted branches and tags, kept up to date by what each write below did (all atomic).
  let hosted = hostedBefore;
  if (hostedBefore.size === 0 && wanted.size > 0) {
    await seedEmpty(sourceDir, hostedPath, wanted, job);
    hosted = new Map(wanted);
  }
  let batches = 0;
  for (;;) {
    const pending = [...wanted].filter(([ref, oid]) => hosted.get(ref) !== oid).map(([ref]) => ref);
    const stale = [...hosted.keys()].filter((ref) => !wanted.has(ref));
    const pushed = total - pending.length;
    report(total === 0 ? 0 : (pushed / total) * 100);
    if (pending.length === 0 && stale.length === 0) break;
    if (batches > 0 && Date.now() - started >= options.budgetMs) {
      return {
        done: false,
        pushed,
        total,
        defaultBranch,
        sizeKiB: await repositorySizeKiB(hostedPath),
        ...changes,
      };
    }
    const batch = orderForPush(pending, defaultRef).slice(0, batchSize);
    const refspecs = [...batch.map((ref) => `+${wanted.get(ref)}:${ref}`), ...stale.map((ref) => `:${ref}`)];
    await runGit(['push', '--progress', '--porcelain', '--atomic', RECEIVE_PACK, hostedPath, ...refspecs], {
      ...local(sourceDir, job),
      onProgress: (line) => {
        const match = WRITING.exec(line);
        if (match && total > 0) report(((pushed + (batch.length * Number(match[1])) / 100) / total) * 100);
      },
    });
    hosted = new Map(hosted);
    for (const ref of batch) hosted.set(ref, wanted.get(ref) as string);
    for (const ref of stale) hosted.delete(ref);
    batches += 1;
  }

  if (batches > 0) await keepPacksFew(hostedPath, job);
  const { store, owner, repo } = options.lfs;
  for (const [index, object] of objects.entries()) {
    if (index > 0 && Date.now() - started >= options.budgetMs) {
      return {
        done: false,
        pushed: total,
        total,
        defaultBranch,
        sizeKiB: await repositorySizeKiB(hostedPath),
        ...changes,
      };
    }
    await store.put(owner, repo, object.oid, object.file);
    onStored(object.size);
  }
  await pointHead(hostedPath, defaultBranch, local(hostedPath, job));
  report(100);
  return {
    done: true,
    pushed: total,
    total,
    defaultBranch,
    sizeKiB: await repositorySizeKiB(hostedPath),
    ...changes,
  };
}

/** Creates the hosted bare repository if absent, its HEAD naming the default branch. */
/**
 * The first publish into an empty hosted repository: its object files are linked from the source
 * (hard links on one file system, copies otherwise: both live on the same EFS in AWS) and its
 * branches and tags written in one `update-ref` transaction. A push would pack and copy the whole
 * history again: on 101 MiB of history the push alone took longer than git's own clone. A later
 * publish (a republish over an earlier history) pushes, which sends only what is new.
 */
async function seedEmpty(
  sourceDir: string,
  hostedPath: string,
  wanted: ReadonlyMap<string, string>,
  job: GitJob,
): Promise<void> {
  const from = join(sourceDir, 'objects');
  const to = join(hostedPath, 'objects');
  for (const dir of await readdir(from)) {
    if (dir !== 'pack' && !/^[0-9a-f]{2}$/.test(dir)) continue;
    await mkdir(join(to, dir), { recursive: true });
    for (const file of await readdir(join(from, dir))) {
      if (dir === 'pack' && !/\.(pack|idx|rev)$/.test(file)) continue;
      const target = join(to, dir, file);
      await link(join(from, dir, file), target).catch(async (error: NodeJS.ErrnoException) => {
        if (error.code === 'EEXIST') return;
        if (error.code !== 'EXDEV' && error.code !== 'EPERM') throw error;
        await copyFile(join(from, dir, file), target);
      });
    }
  }
  const commands = [...wanted].map(([ref, oid]) => `create ${ref} ${oid}\n`).join('');
  await runGit(['update-ref', '--stdin'], { ...local(hostedPath, job), input: commands });
}

/** The default branch first (it carries most of the history), then other branches, then tags. */
function orderForPush(refs: readonly string[], defaultRef: string): string[] {
  const rank = (ref: string) => (ref === defaultRef ? 0 : ref.startsWith('refs/heads/') ? 1 : 2);
  return [...refs].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

interface LfsObject {
  readonly oid: string;
  readonly file: string;
  readonly size: number;
}

/** `<repo>/lfs/objects/ab/cd/<oid>` files (git-lfs's layout), by oid. */
async function lfsObjects(repoDir: string): Promise<LfsObject[]> {
  const root = join(repoDir, 'lfs', 'objects');
  const found: LfsObject[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    let entries: string[];
    try {
      entries = await readdir(dir);
    } catch {
      return;
    }
    for (const entry of entries.sort()) {
      if (depth < 2) await walk(join(dir, entry), depth + 1);
      else if (isLfsOid(entry))
        found.push({ oid: entry, file: join(dir, entry), size: (await stat(join(dir, entry))).size });
    }
  };
  await walk(root, 0);
  return found;
}
