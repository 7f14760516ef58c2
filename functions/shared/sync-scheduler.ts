/**
 * The sync scheduler's time, one fact for CDK (`lib/cdk/sync-scheduler.ts`) and the handler
 * (`services/sync-schedule.ts`): the function's timeout, within the minute between ticks, and the
 * bound of one origin check derived from it.
 */

/** The scheduler function's timeout: EventBridge ticks once a minute. */
export const SYNC_SCHEDULER_TIMEOUT_SECONDS = 55;

/**
 * How long one origin check may take before the origin counts as silent: half the function's
 * time. Checks run side by side, so a silent origin's outcome is recorded, and the syncs due
 * beside it are started, well before the function is stopped.
 */
export const ORIGIN_CHECK_TIMEOUT_MS = (SYNC_SCHEDULER_TIMEOUT_SECONDS * 1000) / 2;
