/**
 * Following an import's origin (issue 27, an extension of the import API): the owner turns it on
 * once the import is `complete`, and ends it with the cut-over. While following, the hosted
 * repository is read-only (`followingRefusal`), since the origin is the source of truth.
 */
import { getImport } from '#data/imports/items';
import { lastRevision } from '#data/imports/revision-map';
import { changeInterval, cutOver, followOrigin, getImportSync, setKeepDeletedRefs } from '#data/imports/sync';
import { refreshDue } from '#data/imports/sync-due';
import { type ImportSync, nextSyncAt, SYNC_OFF } from '#domain/import-sync';
import type { Import } from '#domain/imports';
import { type HttpError, notFound, validationFailed } from '#shared/errors';
import type { Caller } from './authenticate.ts';
import { recordFollowing } from './import-security-events.ts';
import { beginSyncAttempt, conflict, importProgress } from './imports.ts';

const RESOURCE = 'ImportSync';

export interface SyncView {
  readonly record: Import;
  readonly sync: ImportSync;
}

const refused = (field: string, message: string): HttpError =>
  validationFailed([{ resource: RESOURCE, field, code: 'custom', message }]);

const syncOf = async (record: Import): Promise<ImportSync> =>
  (await getImportSync(record.ownerLogin, record.repoName, record.importId)) ?? SYNC_OFF;

/** GET …/import/sync: the owner's import and its sync resource (`off` until asked to follow). */
export async function importSync(caller: Caller, owner: string, repo: string): Promise<SyncView> {
  const record = await importProgress(caller, owner, repo);
  return { record, sync: await syncOf(record) };
}

/** After a change of the schedule: the due-time index says what the sync item says. */
const scheduleMoved = (record: Import): Promise<void> =>
  refreshDue(record.ownerLogin, record.repoName, record.importId, nextSyncAt);

/**
 * PUT …/import/sync: follows the origin, syncing every `intervalMinutes` (null: on demand only),
 * or changes the interval while following (whatever the import's status: a sync may be under
 * way). 422 before the import is `complete` and after a cut-over.
 */
export async function followImportOrigin(
  caller: Caller,
  owner: string,
  repo: string,
  intervalMinutes: number | null,
  /** Absent: unchanged (false when following begins). */
  keepDeletedRefs?: boolean,
): Promise<SyncView> {
  const record = await importProgress(caller, owner, repo);
  const keep = async () => {
    if (keepDeletedRefs !== undefined)
      await setKeepDeletedRefs(record.ownerLogin, record.repoName, record.importId, keepDeletedRefs);
    // Recorded on every answer that finds the import following, once (a retry of the request
    // that began it, whose first try died before recording, records it now).
    await recordFollowing('followStarted', record);
    return importSync(caller, owner, repo);
  };
  // While following (a sync may be running or have failed), only the interval changes.
  if (
    (await syncOf(record)).state === 'following' &&
    (await changeInterval(record.ownerLogin, record.repoName, record.importId, intervalMinutes))
  ) {
    await scheduleMoved(record);
    return keep();
  }
  const outcome = await startFollowing(record, intervalMinutes);
  if (outcome === 'not-complete') {
    const now = await getImport(record.ownerLogin, record.repoName);
    if (!now || now.importId !== record.importId) throw notFound();
    throw refused(
      'status',
      `The import is ${now.status}; a repository follows its origin once the import is complete`,
    );
  }
  if (outcome === 'cut-over')
    throw refused('state', 'The repository was cut over from its origin; it cannot follow it again');
  await scheduleMoved(record);
  return keep();
}

/** Follows from what the import published: its commit count and the last origin revision it mapped. */
const startFollowing = async (record: Import, intervalMinutes: number | null) =>
  followOrigin(
    record.ownerLogin,
    record.repoName,
    record.importId,
    intervalMinutes,
    record.commitCount,
    await lastRevision(record.ownerLogin, record.repoName, record.importId),
  );

/**
 * A batch's import that just completed follows its origin as the batch asks (no caller: the
 * workflow's settle point). False when it cannot (not complete, cut over, already following).
 */
export async function followOnCompletion(record: Import, intervalMinutes: number | null): Promise<boolean> {
  if ((await syncOf(record)).state !== 'off') return false;
  const outcome = await startFollowing(record, intervalMinutes);
  if (outcome !== 'ok') return false;
  await scheduleMoved(record);
  await recordFollowing('followStarted', record);
  return true;
}

/**
 * DELETE …/import/sync: the cut-over. Following stops for good and pushes are accepted again; from
 * its answer on, the service writes nothing more to the repository. 409 while an import or sync
 * attempt runs or waits (as a sync now): that attempt could still publish, so the owner cuts over
 * once it has ended (the check and the cut-over are one transaction with the start of a sync,
 * `cutOver`). Cutting over twice answers the cut-over resource; 422 when the repository never
 * followed.
 */
export async function cutOverImport(caller: Caller, owner: string, repo: string): Promise<SyncView> {
  const record = await importProgress(caller, owner, repo);
  const outcome = await cutOver(record.ownerLogin, record.repoName, record.importId, record.attempt);
  if (outcome === 'ok') await scheduleMoved(record);
  const sync = await syncOf(record);
  if (outcome === 'not-following' && sync.state !== 'cut_over')
    throw refused('state', 'The repository is not following its origin; there is nothing to cut over');
  if (outcome === 'busy' && sync.state === 'following')
    throw conflict(
      'A sync attempt is under way; cut over when it has ended (GET …/import shows its status), so that it publishes nothing after the cut-over',
    );
  if (sync.state === 'cut_over') await recordFollowing('cutOver', record);
  return { record, sync };
}

/** Statuses in which no attempt runs or waits: a sync may start. */
export const SETTLED: ReadonlySet<Import['status']> = new Set(['complete', 'error']);

/**
 * POST …/import/sync: syncs now, as one execution of the import workflow (`owner.repo.sync-N`),
 * answering the import as it starts. 422 when the repository does not follow its origin, 409
 * while an attempt runs or waits for someone.
 */
export async function syncNow(caller: Caller, owner: string, repo: string): Promise<Import> {
  const record = await importProgress(caller, owner, repo);
  const sync = await syncOf(record);
  if (sync.state !== 'following')
    throw refused('state', `The repository is not following its origin (state ${sync.state})`);
  if (!SETTLED.has(record.status) || !(await beginSyncAttempt(record)))
    throw conflict('An import or sync attempt is under way; try again when it has ended');
  return importProgress(caller, owner, repo);
}
