import { isSyncInterval, MAX_SYNC_INTERVAL_MINUTES, MIN_SYNC_INTERVAL_MINUTES } from '#domain/import-sync';
import { followImportOrigin, importSync } from '#services/import-sync';
import { changeThenBack, formRefused, importPageHandler } from './import-page.ts';

/**
 * POST /:owner/:repo/import/follow: the API's PUT …/import/sync, from the page's form: on a
 * schedule (`interval_minutes`) or on demand only (`schedule=on_demand`), to start following or to
 * change the schedule while following.
 */
export const handler = importPageHandler(async (request, caller, repo) => {
  const onDemand = request.form.get('schedule') === 'on_demand';
  const typed = (request.form.get('interval_minutes') ?? '').trim();
  const minutes = /^\d{1,7}$/.test(typed) ? Number(typed) : Number.NaN;
  const { sync } = await importSync(caller, repo.owner, repo.repo);
  return changeThenBack(
    request,
    caller,
    repo,
    async () => {
      if (!onDemand && !isSyncInterval(minutes))
        throw formRefused(
          `Enter the minutes between syncs as a whole number from ${MIN_SYNC_INTERVAL_MINUTES} to ${MAX_SYNC_INTERVAL_MINUTES}, or choose on demand only.`,
        );
      await followImportOrigin(caller, repo.owner, repo.repo, onDemand ? null : minutes);
    },
    { notice: sync.state === 'following' ? 'schedule' : 'following' },
  );
});
