/**
 * Scheduled syncs (issue 27): once a minute (EventBridge in AWS, a timer in `npm start`) the syncs
 * that are due are found with one Query per shard of the due-time index, and each is started as
 * `POST …/import/sync` starts one (`beginSyncAttempt`), unless the origin's fingerprint says
 * nothing changed since the last sync: then only the check is recorded and the schedule moves on.
 * Checks run side by side, each bounded by `ORIGIN_CHECK_TIMEOUT_MS` (half the function's time):
 * a silent origin's check is recorded, with a failed `last_sync` saying so, and starts nothing.
 * Imports that run or wait for someone (`auth_failed`, a project or LFS choice) are skipped.
 */
import { getImport } from '#data/imports/items';
import { getImportSync, recordSyncOutcome } from '#data/imports/sync';
import { type DueSync, dueSyncs, recordCheck } from '#data/imports/sync-due';
import { nextSyncAt } from '#domain/import-sync';
import type { Import } from '#domain/imports';
import { config } from '#shared/config';
import { log } from '#shared/log';
import { ORIGIN_CHECK_TIMEOUT_MS } from '#shared/sync-scheduler';
import { originFingerprint } from '#vcs/origin-fingerprint';
import { SETTLED } from './import-sync.ts';
import { beginSyncAttempt, openImportCredentials } from './imports.ts';

export type DueOutcome = 'started' | 'unchanged' | 'silent' | 'skipped';

export interface DueSyncsRun {
  readonly started: number;
  readonly unchanged: number;
  readonly silent: number;
  readonly skipped: number;
}

const silentOrigin = (): string =>
  `The origin did not answer the check within ${ORIGIN_CHECK_TIMEOUT_MS / 1000} seconds; it is checked again at the next sync time`;

/**
 * The origin's fingerprint, through the import's own access (its credentials, the guard). The
 * adapters' own bounds (`checkTimeoutMs`, and as inactivity) are the check's bound and a little
 * more, so that their processes end by themselves after the scheduler stopped waiting.
 */
export async function fingerprintOf(
  record: Import,
  checkTimeoutMs = ORIGIN_CHECK_TIMEOUT_MS,
): Promise<string | undefined> {
  if (record.vcs === null) return undefined;
  const credentials = await openImportCredentials(record.ownerLogin, record.repoName);
  return originFingerprint(
    record.vcs,
    {
      url: record.vcsUrl,
      ...(credentials ? { credentials } : {}),
      allowedAddresses: config().originAllowedAddresses,
      ...(record.tfvcProject ? { tfvcProject: record.tfvcProject } : {}),
      ...(record.chosenProject ? { choice: record.chosenProject } : {}),
    },
    {
      maxBytes: config().importMaxBytes,
      maxObjects: config().importMaxObjects,
      checkTimeoutMs: checkTimeoutMs + ADAPTER_GRACE_MS,
      idleTimeoutMs: checkTimeoutMs + ADAPTER_GRACE_MS,
    },
  );
}

/** How much longer than the scheduler waits an adapter's own bound lets its process run. */
const ADAPTER_GRACE_MS = 2000;

/** The check found the origin silent: it answered nothing within the bound. */
const SILENT: unique symbol = Symbol('silent');

/** The fingerprint, undefined when the check failed, or `SILENT` once the bound has passed. */
async function boundedCheck(record: Import): Promise<string | undefined | typeof SILENT> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<typeof SILENT>((resolve) => {
    timer = setTimeout(() => resolve(SILENT), ORIGIN_CHECK_TIMEOUT_MS);
  });
  // A check that fails (the origin is down, refuses the credentials) is not "unchanged": the sync
  // runs and the workflow records what happened (`error`, or `auth_failed` waiting for credentials).
  const check = fingerprintOf(record).catch((error: unknown) => {
    log('info', 'origin check failed; syncing', { error: (error as Error).name });
    return undefined;
  });
  try {
    return await Promise.race([check, bound]);
  } finally {
    clearTimeout(timer);
  }
}

async function runDue(due: DueSync, at: Date): Promise<DueOutcome> {
  const record = await getImport(due.owner, due.repo);
  // A cancelled import's item is gone with it; a running or waiting one is not disturbed.
  if (!record || record.importId !== due.importId || !SETTLED.has(record.status)) return 'skipped';
  if ((await getImportSync(due.owner, due.repo, due.importId))?.state !== 'following') return 'skipped';
  const fingerprint = await boundedCheck(record);
  await recordCheck(due.owner, due.repo, due.importId, at, nextSyncAt);
  // A silent origin would hold a sync's fetch as long: the check's outcome is the sync's, and the
  // next due time checks again.
  if (fingerprint === SILENT) {
    await recordSyncOutcome(due.owner, due.repo, due.importId, { errorMessage: silentOrigin() });
    return 'silent';
  }
  if (fingerprint !== undefined && fingerprint === due.originFingerprint) return 'unchanged';
  return (await beginSyncAttempt(record, fingerprint)) ? 'started' : 'skipped';
}

/** Starts every sync due at `at` (the scheduler's event time); one failure does not stop the others. */
export async function startDueSyncs(at: Date): Promise<DueSyncsRun> {
  const due = await dueSyncs(at);
  const outcomes = await Promise.all(
    due.map((sync) =>
      runDue(sync, at).catch((error: unknown): DueOutcome => {
        log('warn', 'scheduled sync not started', { error: (error as Error).name, repo: sync.repo });
        return 'skipped';
      }),
    ),
  );
  const count = (outcome: DueOutcome) => outcomes.filter((each) => each === outcome).length;
  return {
    started: count('started'),
    unchanged: count('unchanged'),
    silent: count('silent'),
    skipped: count('skipped'),
  };
}
