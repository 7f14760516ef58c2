import { tendBatchQueues } from '#services/import-batch-queue';
import { type DueSyncsRun, startDueSyncs } from '#services/sync-schedule';
import { logger } from '#shared/log';

/** What EventBridge sends a rule's target (only `time` is read: the scheduler's "now"). */
export interface ScheduledEvent {
  readonly time?: string;
}

/**
 * The sync scheduler (issue 27): an EventBridge rule invokes it once a minute in AWS; `npm start`
 * invokes it from a timer (`lib/local/sync-timer.ts`) with the same event shape. The event's time
 * is the moment syncs are due by, so a delivery that comes late still starts what was due then.
 */
export async function handler(event: ScheduledEvent): Promise<DueSyncsRun> {
  const parsed = event.time === undefined ? Number.NaN : Date.parse(event.time);
  const at = new Date(Number.isFinite(parsed) ? parsed : Date.now());
  // Batches first: the safety net that moves a batch's queue on when a settle point could not.
  const batchesStarted = await tendBatchQueues();
  const run = await startDueSyncs(at);
  if (run.started + run.unchanged + run.silent + run.skipped + batchesStarted > 0)
    logger.info('scheduled syncs', { ...run, batchesStarted });
  return run;
}
