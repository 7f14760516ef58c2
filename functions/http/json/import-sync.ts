import { type ImportSync, nextSyncAt, type SyncRefChange } from '#domain/import-sync';
import type { Import } from '#domain/imports';
import type { PublicUrls } from '#shared/urls';
import { importUrl } from './import.ts';

/** A branch or tag a sync deleted or rewrote (`new_tip` null: deleted), and its backup ref if kept. */
const refChangeJson = (change: SyncRefChange) => ({
  ref: change.ref,
  old_tip: change.oldTip,
  new_tip: change.newTip,
  backup_ref: change.backupRef,
});

/**
 * The sync resource (an extension: GitHub has none), every field always present: `interval_minutes`
 * null means on demand only; times and `origin_revision` are null until they exist; `last_sync` is
 * null before the first sync, and carries `error_message` only when it failed; `deleted_refs` and
 * `rewritten_refs` name at most 100 of each (`MAX_REPORTED_REF_CHANGES`), empty for a failure.
 */
export function importSyncJson(record: Import, sync: ImportSync, urls: PublicUrls) {
  const lastSync = sync.lastSync;
  return {
    url: `${importUrl(record, urls)}/sync`,
    import_url: importUrl(record, urls),
    state: sync.state,
    interval_minutes: sync.intervalMinutes,
    following_since: sync.followingSince,
    last_synced_at: sync.lastSyncedAt,
    last_checked_at: sync.lastCheckedAt,
    next_sync_at: nextSyncAt(sync),
    origin_revision: sync.originRevision,
    last_sync:
      lastSync === null
        ? null
        : {
            status: lastSync.status,
            new_commits: lastSync.newCommits,
            ...(lastSync.errorMessage === undefined ? {} : { error_message: lastSync.errorMessage }),
            deleted_refs: (lastSync.refChanges?.deleted ?? []).map(refChangeJson),
            rewritten_refs: (lastSync.refChanges?.rewritten ?? []).map(refChangeJson),
          },
    cut_over_at: sync.cutOverAt,
    keep_refs_deleted_while_following: sync.keepDeletedRefs === true,
    /** Deprecated name of the field above, kept for existing clients (decision 0150). */
    keep_deleted_refs: sync.keepDeletedRefs === true,
  };
}
