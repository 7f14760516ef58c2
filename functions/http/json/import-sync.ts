import { type ImportSync, nextSyncAt } from '#domain/import-sync';
import type { Import } from '#domain/imports';
import type { PublicUrls } from '#shared/urls';
import { importUrl } from './import.ts';

/**
 * The sync resource (an extension: GitHub has none), every field always present: `interval_minutes`
 * null means on demand only; times and `origin_revision` are null until they exist; `last_sync` is
 * null before the first sync, and carries `error_message` only when it failed.
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
          },
    cut_over_at: sync.cutOverAt,
  };
}
