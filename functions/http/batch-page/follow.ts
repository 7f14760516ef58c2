import { isSyncInterval, MAX_SYNC_INTERVAL_MINUTES, MIN_SYNC_INTERVAL_MINUTES } from '#domain/import-sync';
import { followImportBatch } from '#services/import-batches';
import { HttpError } from '#shared/errors';
import { actOnAll, batchPageHandler } from './batch-page.ts';

/**
 * POST /imports/batches/:batch_id/follow: the API's PUT …/import-batches/:id/sync from the
 * dashboard's form: every complete import follows (or changes its interval) on a schedule
 * (`interval_minutes`) or on demand only (`schedule=on_demand`); the others when they complete.
 */
export const handler = batchPageHandler((request, caller, batchId) => {
  const onDemand = request.form.get('schedule') === 'on_demand';
  const typed = (request.form.get('interval_minutes') ?? '').trim();
  const minutes = /^\d{1,7}$/.test(typed) ? Number(typed) : Number.NaN;
  return actOnAll(request, caller, batchId, 'schedule', async () => {
    if (!onDemand && !isSyncInterval(minutes))
      throw new HttpError(
        422,
        `Enter the minutes between syncs as a whole number from ${MIN_SYNC_INTERVAL_MINUTES} to ${MAX_SYNC_INTERVAL_MINUTES}, or choose on demand only.`,
      );
    return followImportBatch(caller, batchId, onDemand ? null : minutes);
  });
});
