/**
 * What each step of the import workflow does (`statemachines/import.asl.json`; the task handlers
 * in `functions/workflow/` are one line each over these). Every step:
 * - reads the import item and refuses to work for an attempt that is no longer current (a
 *   restarted or cancelled import's late invocations change nothing: `AttemptSuperseded`);
 * - while it runs tools, watches the import item and, once the attempt is cancelled or restarted,
 *   kills their processes and writes nothing more (`attempt-watch.ts`);
 * - writes status and progress to the import item (at most every ~2 s), where the API reads them;
 * - keeps its files in the attempt's own directory, which persists between chunks.
 * Error class names are the workflow's contract (`OriginAuthFailed` → AuthFailed; the rest → Error).
 */
import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { getImport, listAuthors } from '#data/imports/items';
import {
  addAuthors,
  enterStatus,
  type Progress,
  recordProgress,
  type StatusExtra,
  type StatusMove,
  setImportReport,
  setLargeFiles,
  waitForPerson as storeWaiting,
} from '#data/imports/progress';
import { getImportSync, recordSyncOutcome } from '#data/imports/sync';
import { recordPush } from '#data/repositories';
import type { StoredReport } from '#domain/import-report';
import {
  MAX_REPORTED_REF_CHANGES,
  nextSyncAt,
  SYNC_AUTH_FAILED_MESSAGE,
  type SyncRefChanges,
} from '#domain/import-sync';
import {
  choicesOf,
  type FailedStep,
  type Import,
  type ImportStatus,
  type LargeFile,
  type WaitingFor,
} from '#domain/imports';
import { type DeathPlace, deathMessage, isWorkerDeath } from '#domain/worker-death';
import { config } from '#shared/config';
import { countSignal, log } from '#shared/log';
import { adapterFor, detectionCandidates, detectOrigin } from '#vcs/adapters';
import { redactCredentials } from '#vcs/bounded-process';
import { loadFindings, saveFinding } from '#vcs/findings';
import { prepareHome } from '#vcs/git-command';
import { holdsHgMetadata } from '#vcs/hg-metadata-scan';
import { findLargeFiles, type GitJob, publishedHistory, renamedRawDir, rewriteHistory } from '#vcs/history';
import { hostedRepositoryPath, importAttemptDir } from '#vcs/hosted-paths';
import { type OriginAccess, type OriginAuthor, type RawJob, rawRepositoryPath } from '#vcs/origin';
import { fetchOriginLfs } from '#vcs/origin-lfs';
import { publish } from '#vcs/publish';
import { readRevisionList, writePublishedRevisions } from '#vcs/revision-map';
import { newLargeBlob, recordSeenTips, seenTips } from '#vcs/seen-history';
import { removeAbandonedLocks, removeDeadLocks } from '#vcs/stale-locks';
import { writeWhole } from '#vcs/whole-file';

import { AttemptSuperseded, runWatched, superseded } from './attempt-watch.ts';
import { batchImportSettled } from './import-batch-queue.ts';
import { nextRound, type Rounds } from './import-continuation.ts';
import { statusAnnouncedAgain, statusChanged } from './import-events.ts';
import { type ImportExecutionInput, resumeWaiting } from './import-workflow.ts';
import { openImportCredentials, republishIfMappingsChanged } from './imports.ts';
import { lfsStore } from './lfs-objects.ts';
import { storePublishedRevisions } from './published-revision-map.ts';
import { announceImportOutcome } from './webhook-events.ts';

/** What every step gets: the execution input (and the results of earlier states, unused here). */
export type StepInput = ImportExecutionInput;

export { AttemptSuperseded };

/** Progress reaches DynamoDB at most this often. */
const PROGRESS_INTERVAL_MS = 2000;

async function current(input: StepInput): Promise<Import> {
  const record = await getImport(input.owner, input.repo);
  if (!record || record.attempt !== input.attempt) throw superseded(input);
  return record;
}

/**
 * The attempt's writes to its import. Each is conditional on the attempt: one that loses its
 * condition means the import was restarted or cancelled, and the step stops (`AttemptSuperseded`).
 * A write that moved the status publishes its events (the one place steps publish) while the
 * step goes on; `announced` waits for them, before the step returns (`watchedStep`).
 */
function writesOf(input: StepInput, from: ImportStatus) {
  const { owner, repo, attempt } = input;
  const of = { attempt, sync: input.sync === true };
  let seen = from;
  const announcing: Promise<void>[] = [];
  // `status`: the status the write enters, if any. A write that moves it counts the change in
  // the item (`StatusMove`); one that finds it entered already (a step run again) announces the
  // change again under its identity, should the first run have died before it announced it.
  const written = async (
    write: (move: StatusMove | undefined) => Promise<Import | false>,
    status: ImportStatus | undefined,
  ) => {
    const record = await write(status !== undefined && status !== seen ? { from: seen } : undefined);
    if (!record) throw superseded(input);
    if (status === undefined) return;
    // Neither throws.
    if (record.status === seen) {
      if (status === seen) announcing.push(statusAnnouncedAgain(record, status, of));
      return;
    }
    announcing.push(statusChanged(owner, repo, seen, of, record));
    seen = record.status;
  };
  const must = async (write: Promise<boolean>) => {
    if (!(await write)) throw superseded(input);
  };
  return {
    progress: (progress: Progress) =>
      written((move) => recordProgress(owner, repo, attempt, progress, move), progress.status),
    status: (status: ImportStatus, extra?: StatusExtra) =>
      written((move) => enterStatus(owner, repo, attempt, status, extra, move), status),
    largeFiles: (importId: number, files: readonly LargeFile[]) =>
      must(setLargeFiles(owner, repo, importId, attempt, [...files])),
    report: (importId: number, report: StoredReport, progress?: Omit<Progress, 'status'>) =>
      must(setImportReport(owner, repo, importId, attempt, report, progress)),
    announced: async () => {
      await Promise.all(announcing);
    },
  };
}

type Writes = ReturnType<typeof writesOf>;

async function originAccess(record: Import): Promise<OriginAccess> {
  const credentials = await openImportCredentials(record.ownerLogin, record.repoName);
  return {
    url: record.vcsUrl,
    ...(credentials ? { credentials } : {}),
    allowedAddresses: config().originAllowedAddresses,
    ...(record.tfvcProject ? { tfvcProject: record.tfvcProject } : {}),
  };
}

const attemptDir = (input: Pick<StepInput, 'owner' | 'repo'>, attempt: number) =>
  importAttemptDir(config().importWorkDir, input.owner, input.repo, attempt);

/**
 * The raw history of an attempt (its Git data never changed after the raw step), the rewritten
 * history, and the one that is pushed: the rewritten one, or the raw history when nothing was
 * rewritten (`RewriteHistory`'s `rewritten`; the origin's LFS objects then wait in its `lfs/`).
 */
const rawDir = rawRepositoryPath;
const outDir = (dir: string) => join(dir, 'out.git');
const publishedDir = (dir: string, rewritten: boolean) =>
  publishedHistory(rawDir(dir), outDir(dir), rewritten);
/** The revision map of what is pushed (origin revision → published commit), from the rewrite step. */
const publishedRevisionsFile = (dir: string) => join(dir, 'published-revisions');
/**
 * A sync's deletions and rewrites, planned by its first push call (`publish-follow.ts`); named by
 * attempt, since the directory moves on to the next sync.
 */
const syncRefsFile = (dir: string, attempt: number) => join(dir, `sync-refs.${attempt}.json`);
/**
 * The push step's answer once its last batch is pushed and its revision map stored, written before
 * the pushed copy is removed: a push run again (its worker died before its answer reached the
 * workflow) answers the same without the copy. Named by attempt, as the directory moves on.
 */
const pushedFile = (dir: string, attempt: number) => join(dir, `pushed.${attempt}.json`);

/** What every step is limited by: the adapters' raw copy, the rewrite, the push. */
const adapterOptions = () => ({ maxBytes: config().importMaxBytes, maxObjects: config().importMaxObjects });

/** A chunk's time budget. */
const budgetMs = () => config().importChunkSeconds * 1000;

/**
 * The attempt's git context: a private HOME inside its directory `dir`, trusting the attempt's own
 * repositories and the hosted one (the push step's target), the same for every step so that its
 * config is written once an attempt (`prepareHome`), and a limit per git call of the budget plus
 * four minutes (600 s + 240 s stays under Lambda's 900 s in AWS).
 */
async function gitJob(input: Pick<StepInput, 'owner' | 'repo'>, dir: string): Promise<GitJob> {
  const home = join(dir, 'home');
  await prepareHome(home, [rawDir(dir), outDir(dir), renamedRawDir(outDir(dir)), hostedPath(input)]);
  return { home, timeoutMs: budgetMs() + 240_000 };
}

const hostedPath = (input: Pick<StepInput, 'owner' | 'repo'>) =>
  hostedRepositoryPath(config().repositoriesDir, input.owner, input.repo);

/**
 * Throttles progress writes to one per interval (the first an interval after the step began, which
 * has just written its status), keeping the latest values; `flush` writes what is left, `settle`
 * drops it (a write that follows says more).
 */
function progressWriter(input: StepInput) {
  let last = Date.now();
  let pending: Progress | undefined;
  let writing: Promise<unknown> = Promise.resolve();
  const write = (progress: Progress) => {
    last = Date.now();
    pending = undefined;
    writing = writing
      .then(() => recordProgress(input.owner, input.repo, input.attempt, progress))
      .catch((error: unknown) => log('warn', 'import progress not recorded', { error: String(error) }));
  };
  return {
    report(progress: Progress) {
      pending = { ...pending, ...progress };
      if (Date.now() - last >= PROGRESS_INTERVAL_MS) write(pending);
    },
    async flush() {
      if (pending) write(pending);
      await writing;
    },
    async settle() {
      pending = undefined;
      await writing;
    },
  };
}

/**
 * A step that runs tools: watched while it runs (`runWatched`). After a cancel, what it may have
 * written since the API removed the import's files goes too: its attempt's directory (attempts are
 * never reused, even by a later import) and, for `publishes`, the hosted repository the cancel
 * emptied (unless a new import of the repository began meanwhile: it publishes over it).
 */
function watchedStep<O, I extends StepInput = StepInput>(
  run: (input: I, record: Import, write: Writes) => Promise<O>,
  { publishes = false } = {},
): (input: I) => Promise<O> {
  return (input) =>
    runWatched(
      input,
      async (record) => {
        const write = writesOf(input, record.status);
        await clearDeadLocks(attemptDir(input, input.attempt), publishes ? hostedPath(input) : undefined);
        try {
          return await run(input, record, write);
        } finally {
          await write.announced();
        }
      },
      async (seen, now) => {
        await rm(attemptDir(input, input.attempt), { recursive: true, force: true, maxRetries: 3 });
        if (publishes && now === undefined && !seen.ownerPushed)
          await rm(hostedPath(input), {
            recursive: true,
            force: true,
            maxRetries: 3,
          });
      },
    );
}

/**
 * Before a step starts any process in an attempt's directory: the locks a dead worker's git or hg
 * left there (`#vcs/stale-locks`), which would fail or stall the step's tools; for a step that
 * publishes, also those a dead push left in the hosted repository (only once they stand unchanged,
 * since the Git front end shares that repository).
 */
async function clearDeadLocks(dir: string, hosted?: string): Promise<void> {
  const removed = [...(await removeDeadLocks(dir)), ...(hosted ? await removeAbandonedLocks(hosted) : [])];
  if (removed.length > 0) log('warn', 'locks of a dead worker removed', { locks: removed.length });
}

/** Detect: identifies the VCS at the URL (only the import's own VCS when it has one). */
export const detect = watchedStep(async function detect(
  _input: StepInput,
  record: Import,
  write: Writes,
): Promise<{ outcome: 'found' | 'needs_auth' | 'multiple' | 'nothing' }> {
  // Run again after it had entered what it found: not back to `detecting` (a change announced anew).
  const last = record.lastStatusChange;
  const ranBefore =
    last?.attempt === record.attempt && last.from === 'detecting' && last.to === record.status;
  if (record.status !== 'detecting' && !ranBefore) await write.progress({ status: 'detecting' });
  const options = adapterOptions();
  const candidates = record.vcs ? [adapterFor(record.vcs, options)] : detectionCandidates(options);
  const detection = await detectOrigin(await originAccess(record), candidates);
  switch (detection.kind) {
    case 'found':
      await write.status('importing', { vcs: detection.vcs });
      break;
    case 'multiple':
      // The choices wait with the status still `detecting`; the waiting state shows them.
      await write.status('detecting', { projectChoices: detection.choices });
      break;
    case 'nothing':
      await write.status('detection_found_nothing');
      break;
    case 'needs_auth':
      // The waiting state writes detection_needs_auth together with its task token.
      break;
  }
  return { outcome: detection.kind };
});

/**
 * A sync or a republish continues from the attempt before (`fromAttempt`): its whole working
 * directory (the raw history and whatever the adapter keeps to follow the origin) moves on to this
 * attempt, a rename on one file system. `prepare` runs on it first (a sync reopens the raw history
 * for what is new); both are repeated safely when a retried step finds the move undone, and a step
 * that finds its directory in place (a later chunk, a retry after the move) moves nothing.
 */
async function carryOver(
  input: StepInput,
  dir: string,
  prepare?: (previousDir: string) => Promise<void>,
): Promise<void> {
  if (input.fromAttempt === undefined || input.fromAttempt === input.attempt || (await exists(dir))) return;
  const previous = attemptDir(input, input.fromAttempt);
  if (!(await exists(previous))) return;
  await clearDeadLocks(previous);
  await prepare?.(previous);
  // A reopen that keeps nothing (`startAfresh`) leaves nothing to move: the step starts empty.
  if (await exists(previous)) await rename(previous, dir);
}

/** What the adapter gets for a raw chunk: the origin, the attempt's directory, the owner's choices. */
export const rawJobOf = (record: Import, access: OriginAccess, workDir: string): RawJob => ({
  ...access,
  workDir,
  ...(record.chosenProject ? { choice: record.chosenProject } : {}),
  choices: choicesOf(record),
});

/** ImportRawHistory: one bounded chunk of the raw history, then the authors found so far. */
export const importRawChunk = watchedStep(async function importRawChunk(
  input: StepInput,
  record: Import,
  write: Writes,
): Promise<{ done: boolean; needsLfsChoice: boolean } & Rounds> {
  if (record.vcs === null) throw new Error('importRawChunk: the import has no vcs (detection did not run)');
  const adapter = adapterFor(record.vcs, adapterOptions());
  const dir = attemptDir(input, input.attempt);
  await carryOver(input, dir, async (previous) => {
    // A restart that resumes takes the failed attempt's raw history as it is: its chunks continue.
    if (input.resume) return;
    await adapter.reopen(previous);
    // Before anything is fetched: what this sync's passes over authors and large files skip.
    if (await exists(join(rawDir(previous), 'HEAD')))
      await recordSeenTips(previous, input.attempt, await gitJob(input, previous));
  });
  await mkdir(dir, { recursive: true });
  // The HOME the adapter's tools and the later steps use, trusting all of the attempt's at once.
  await gitJob(input, dir);
  // The status and the origin's credentials side by side (independent round trips).
  const [, access] = await Promise.all([
    record.status === 'importing' ? undefined : write.progress({ status: 'importing' }),
    originAccess(record),
  ]);
  const job = rawJobOf(record, access, dir);
  const progress = progressWriter(input);
  const chunk = await adapter.importRawChunk(job, budgetMs(), (update) =>
    progress.report({ percent: update.percent, commitCount: update.commitCount }),
  );
  progress.report({ percent: chunk.percent, commitCount: chunk.commitCount });
  // A finished raw step writes its final progress below.
  await (chunk.done ? progress.settle() : progress.flush());
  const seen = await seenTips(dir, input.attempt);
  // The authors' git not side by side with the large files' scan: each prepares the job's HOME, and
  // a git that opens its config while it is replaced may not find it on EFS (a NFS; FUSE in the
  // as-deployed tests). Their writes go on while the scan runs.
  const recording = recordNewAuthors(input, record, await adapter.authors(job, seen));
  // The API functions have no file system: the findings so far go where they read the import,
  // after every chunk, so that an import that fails later still reports what it found.
  if (!chunk.done) {
    await recording;
    await write.report(record.importId, { rawDone: false, findings: await loadFindings(dir) });
    return { done: false, needsLfsChoice: false, ...nextRound(input, 'raw', false) };
  }

  const hgJob = record.vcs === 'git' ? await gitJob(input, dir) : undefined;
  const scan = largeFilesOf(input, dir, record, seen);
  // The rewrite step's look for `.hg` folders in a Git history, side by side with these (a walk of
  // every commit's trees, the rewrite's longest part when nothing changes): a scan that finds none
  // keeps the tips it read (`hg-metadata-scan.ts`), and the rewrite's then reads only what is newer.
  // One that finds some, or fails, is answered again by the rewrite, which drops them: here it is
  // only a head start, and never fails the step.
  const hgScan =
    hgJob &&
    holdsHgMetadata(rawDir(dir), hgJob).catch((error: unknown) =>
      log('warn', 'the raw step could not look for .hg folders', { error: String(error) }),
    );
  // None is left running when another fails.
  await Promise.allSettled([recording, scan, hgScan]);
  await recording;
  const largeFiles = await scan;
  // A sync that finds none where the import had none leaves the stored list as it is.
  if (largeFiles.length > 0 || record.largeFilesCount !== 0)
    await write.largeFiles(record.importId, largeFiles);
  await write.report(
    record.importId,
    { rawDone: true, findings: await loadFindings(dir) },
    { percent: 100, commitCount: chunk.commitCount },
  );
  return {
    done: true,
    // The choice may have been made while the step ran: read again only when there is one to make.
    needsLfsChoice: largeFiles.length > 0 && (await current(input)).useLfs === 'undecided',
    ...nextRound(input, 'raw', true),
  };
});

/**
 * The raw history's large files. A sync whose attempt before found none looks only at the objects
 * it fetched (`seen-history.ts`), and scans the whole history only when one of them is large.
 */
async function largeFilesOf(
  input: StepInput,
  dir: string,
  record: Import,
  seen: readonly string[] | undefined,
) {
  const job = await gitJob(input, dir);
  const threshold = config().largeFileBytes;
  if (seen && record.largeFilesCount === 0 && !(await newLargeBlob(rawDir(dir), threshold, seen, job)))
    return [];
  return findLargeFiles(rawDir(dir), threshold, job);
}

/**
 * Authors appear while the raw step runs; each chunk adds the ones not recorded yet. The data
 * layer keeps one author per origin identity, so a repeated chunk adds nothing twice.
 */
async function recordNewAuthors(
  input: StepInput,
  record: Import,
  found: readonly OriginAuthor[],
): Promise<void> {
  if (found.length === 0) return;
  const known = new Set((await listAuthors(input.owner, input.repo, record.importId)).map((a) => a.remoteId));
  const fresh = found.filter((author) => !known.has(author.remoteId));
  if (fresh.length > 0) await addAuthors(input.owner, input.repo, record.importId, input.attempt, fresh);
}

/** RewriteHistory: author mappings and the LFS choice; nothing is rewritten when nothing changes. */
export const rewrite = watchedStep(async function rewrite(
  input: StepInput,
  record: Import,
  write: Writes,
): Promise<{ rewritten: boolean; mappingVersion: number }> {
  const [, authors] = await Promise.all([
    write.progress({ status: 'mapping', pushPercent: null }),
    listAuthors(input.owner, input.repo, record.importId),
  ]);
  const dir = attemptDir(input, input.attempt);
  await carryOver(input, dir);
  await mkdir(dir, { recursive: true });
  const lfs = record.largeFilesCount === 0 || record.useLfs === 'undecided' ? 'none' : record.useLfs;
  const result = await rewriteHistory(
    rawDir(dir),
    outDir(dir),
    {
      authors: authors.map(({ remoteId, name, email }) => ({ remoteId, name, email })),
      lfs,
      thresholdBytes: config().largeFileBytes,
      mayHoldHg: record.vcs === 'git',
      ...adapterOptions(),
    },
    await gitJob(input, dir),
  );
  await writePublishedRevisions(rawDir(dir), publishedRevisionsFile(dir), result.commitMap);
  if (record.vcs === 'git') {
    // The raw step wrote the findings so far: the report is written again only when this step adds some.
    const before = JSON.stringify(await loadFindings(dir));
    // Tree entries git refuses (`.git`, `..`) and `.hg` folders, left out by the rewrite (`#vcs/history-drop`).
    await saveFinding(dir, 'unstorable_paths', result.unstorablePaths);
    // The origin's own LFS objects, before the push step stores and counts them (`origin-lfs.ts`).
    await fetchOriginLfs(
      {
        access: {
          url: record.vcsUrl,
          credentials: () => openImportCredentials(record.ownerLogin, record.repoName),
        },
        guard: { allowedAddresses: config().originAllowedAddresses },
        repoDir: publishedDir(dir, result.rewritten),
        workDir: dir,
        maxBytes: config().importMaxBytes,
        cacheDir: join(dir, 'origin-lfs'),
        // Raw tips: they name the published commits only when nothing was rewritten (else all is read).
        seen: await seenTips(dir, input.attempt),
      },
      await gitJob(input, dir),
    );
    const findings = await loadFindings(dir);
    if (JSON.stringify(findings) !== before) await write.report(record.importId, { rawDone: true, findings });
  }
  // Read (with the import) before the authors: Complete compares it with the import's count then.
  return { rewritten: result.rewritten, mappingVersion: record.mappingVersion ?? 0 };
});

/** What the push step hands the workflow (`$.push`): whether it is done, and what Complete records. */
export interface PushOutcome extends Partial<Rounds> {
  readonly done: boolean;
  readonly defaultBranch?: string;
  readonly sizeKiB?: number;
  readonly refChanges?: SyncRefChanges;
  /** The revision map's last origin revision, as stored (null: an empty map). */
  readonly originRevision?: string | null;
}

/** Push: the next bounded batch of refs into the hosted repository. */
export const push = watchedStep(publishBatch, { publishes: true });

/** The push step's input: RewriteHistory's outcome says which history is published. */
type PushInput = StepInput & { readonly rewrite?: { readonly rewritten?: boolean } };

async function publishBatch(input: PushInput, record: Import, write: Writes): Promise<PushOutcome> {
  const dir = attemptDir(input, input.attempt);
  const answered = await readFile(pushedFile(dir, input.attempt), 'utf8').catch(() => undefined);
  if (answered !== undefined) return JSON.parse(answered) as PushOutcome;
  const [, follow] = await Promise.all([
    record.status === 'pushing' ? undefined : write.progress({ status: 'pushing', pushPercent: 0 }),
    input.sync ? followPublish(input, record, dir) : undefined,
  ]);
  const progress = progressWriter(input);
  const published = publishedDir(dir, input.rewrite?.rewritten !== false);
  const result = await publish(
    published,
    hostedPath(input),
    {
      budgetMs: budgetMs(),
      onPercent: (percent) => progress.report({ pushPercent: percent }),
      lfs: { store: lfsStore(), owner: input.owner, repo: input.repo },
      ...adapterOptions(),
      ...(follow ? { follow } : {}),
    },
    await gitJob(input, dir),
  );
  if (!result.done) {
    await progress.flush();
    return { done: false, ...nextRound(input, 'push', false) };
  }
  progress.report({ pushPercent: 100 });
  const revisions = await readRevisionList(publishedRevisionsFile(dir));
  if (!(await storePublishedRevisions(dir, { ...input, importId: record.importId }, revisions)))
    throw superseded(input);
  const outcome: PushOutcome = {
    done: true,
    defaultBranch: result.defaultBranch,
    sizeKiB: result.sizeKiB,
    ...(result.refChanges ? { refChanges: reported(result.refChanges) } : {}),
    originRevision: revisions.at(-1)?.originRevision ?? null,
    ...nextRound(input, 'push', true),
  };
  await writeWhole(pushedFile(dir, input.attempt), JSON.stringify(outcome));
  // The pushed copy, or the LFS objects that waited in raw.git, are not needed again (a republish
  // rewrites from the raw history; the origin's LFS objects stay cached in `origin-lfs`).
  await Promise.all([
    rm(published === outDir(dir) ? published : join(published, 'lfs'), { recursive: true, force: true }),
    rm(syncRefsFile(dir, input.attempt), { force: true }),
    progress.flush(),
  ]);
  return outcome;
}

/**
 * A sync publishes what the origin deleted or rewrote with backups, as the owner chose, and only
 * while the repository follows its origin. No cut-over can land between this read and the
 * publish: a cut-over needs the import's attempt settled (`cutOver`), and this attempt is not
 * until Complete; the read is the publish's own guard should an attempt run without that.
 */
async function followPublish(input: StepInput, record: Import, dir: string) {
  const sync = await getImportSync(input.owner, input.repo, record.importId);
  if (sync?.state !== 'following') throw superseded(input);
  return { keepDeletedRefs: sync?.keepDeletedRefs === true, planFile: syncRefsFile(dir, input.attempt) };
}

/** The changes the workflow carries to Complete: a bounded number of each kind. */
const reported = (changes: SyncRefChanges): SyncRefChanges => ({
  deleted: changes.deleted.slice(0, MAX_REPORTED_REF_CHANGES),
  rewritten: changes.rewritten.slice(0, MAX_REPORTED_REF_CHANGES),
});

/** Complete: the repository shows the imported history (table only: no file system in AWS). */
export async function complete(
  input: StepInput & { push?: PushOutcome; rewrite?: { readonly mappingVersion?: number } },
): Promise<Record<string, never>> {
  const record = await current(input);
  // The repository and the sync's outcome first (side by side): a client that sees `complete`
  // then reads this sync's outcome, not the last.
  await Promise.all([
    recordPush(
      record.ownerLogin,
      record.repoName,
      {
        size: input.push?.sizeKiB ?? 0,
        hasContent: true,
        ...(input.push?.defaultBranch ? { defaultBranch: input.push.defaultBranch } : {}),
      },
      'import',
    ),
    recordSyncOutcome(
      record.ownerLogin,
      record.repoName,
      record.importId,
      {
        commitCount: record.commitCount,
        attempt: input.attempt,
        originFingerprint: input.originFingerprint,
        ...(input.push?.refChanges ? { refChanges: input.push.refChanges } : {}),
        ...(input.push?.originRevision !== undefined ? { originRevision: input.push.originRevision } : {}),
      },
      nextSyncAt,
    ),
  ]);
  const write = writesOf(input, record.status);
  await write.status('complete');
  countSignal('ImportCompleted');
  await Promise.all([write.announced(), announceImportOutcome(attemptOf(record), 'success')]);
  log('info', 'import complete', { owner: input.owner, repo: input.repo, attempt: input.attempt });
  const rewritten = input.rewrite?.mappingVersion;
  if (rewritten !== undefined)
    await republishIfMappingsChanged(input.owner, input.repo, input.attempt, rewritten);
  await batchImportSettled(input.owner, input.repo);
  return {};
}

/** What a Catch hands the Error state: Step Functions' error name and cause. */
export interface Failure {
  readonly Error?: string;
  readonly Cause?: string;
}

/** Errors whose messages were written for the user (no credentials, no internals). */
const READABLE_ERRORS = new Set([
  'OriginFailed',
  'ForbiddenAddress',
  'OriginAuthFailed',
  'StorageFull',
  'ContinuationRefused',
]);

/**
 * The message the user reads for a failure: the origin's own words when they are fit to show; for a
 * worker that died on every retry, what died and how far the step had got (`place`); else a plain
 * sentence.
 */
export function readableFailure(step: FailedStep, failure: Failure | undefined, place?: DeathPlace): string {
  const name = failure?.Error ?? '';
  if (name === 'States.Timeout') return `The ${step} step timed out waiting for an answer`;
  if (isWorkerDeath(name)) return deathMessage(step, name, place);
  if (READABLE_ERRORS.has(name)) {
    let message = failure?.Cause ?? '';
    try {
      const parsed = JSON.parse(message) as { errorMessage?: unknown };
      if (typeof parsed.errorMessage === 'string') message = parsed.errorMessage;
    } catch {
      // a plain-text cause
    }
    if (message.trim() !== '') return redactCredentials(message).slice(0, 500);
  }
  return `The ${step} step failed unexpectedly; restart the import to try again`;
}

/** Error: status `error` with `failed_step` and a readable message. */
export async function recordFailure(
  input: StepInput & { failedStep: FailedStep; failure?: Failure },
): Promise<Record<string, never>> {
  const record = await getImport(input.owner, input.repo);
  const errorMessage = readableFailure(
    input.failedStep,
    input.failure,
    record?.attempt === input.attempt ? record : undefined,
  );
  log('warn', 'import failed', {
    owner: input.owner,
    repo: input.repo,
    attempt: input.attempt,
    failedStep: input.failedStep,
    error: input.failure?.Error,
  });
  // The sync's outcome first (only while this attempt is the import's), then the status.
  if (record?.attempt === input.attempt)
    await recordSyncOutcome(record.ownerLogin, record.repoName, record.importId, { errorMessage });
  const of = { attempt: input.attempt, sync: input.sync === true };
  const moves = record?.attempt === input.attempt && record.status !== 'error';
  const written = await enterStatus(
    input.owner,
    input.repo,
    input.attempt,
    'error',
    { failedStep: input.failedStep, errorMessage },
    moves ? { from: record.status } : undefined,
  );
  if (written && record) {
    // Run again after it had written `error`: the same change and outcome, under their identities.
    await (moves
      ? statusChanged(input.owner, input.repo, record.status, of, written)
      : statusAnnouncedAgain(written, 'error', of));
    await announceImportOutcome(attemptOf(written), 'failure');
  }
  countSignal('ImportFailed');
  await batchImportSettled(input.owner, input.repo);
  return {};
}

/**
 * The waiting states (`.waitForTaskToken`): store the token with the status the person reads, so
 * the API can resume the execution. When the LFS choice was made meanwhile, resume at once.
 */
export async function waitForPerson(
  input: StepInput & { waitingFor: WaitingFor; status: ImportStatus; taskToken: string },
): Promise<Record<string, never>> {
  const { owner, repo, attempt, waitingFor, taskToken, status } = input;
  const before = await getImport(owner, repo);
  // A sync whose origin refuses the credentials: following goes on, and `last_sync` says it waits,
  // written first (as every outcome is): a client that sees `auth_failed` then reads why.
  if (status === 'auth_failed' && before?.attempt === attempt)
    await recordSyncOutcome(owner, repo, before.importId, {
      errorMessage: SYNC_AUTH_FAILED_MESSAGE,
      status: 'auth_failed',
    });
  const moves = before?.attempt === attempt && before.status !== status;
  const stored = await storeWaiting(
    owner,
    repo,
    attempt,
    waitingFor,
    taskToken,
    status,
    moves ? { from: before.status } : undefined,
  );
  if (stored === true && before)
    await statusChanged(owner, repo, before.status, { attempt, sync: input.sync });
  if (stored === 'already-decided') await resumeWaiting(taskToken, {});
  else if (!stored) throw superseded(input);
  // Waiting for a person frees the import's batch slot (`releasesSlot`).
  else await batchImportSettled(owner, repo);
  return {};
}

/** What names an attempt, for the identities of what it announces. */
const attemptOf = (record: Import) => ({
  owner: record.ownerLogin,
  repo: record.repoName,
  importId: record.importId,
  attempt: record.attempt,
});

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
