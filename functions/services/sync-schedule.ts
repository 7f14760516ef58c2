/**
 * Scheduled syncs (issue 27): once a minute (EventBridge in AWS, a timer in `npm start`) the syncs
 * that are due are found with one Query per shard of the due-time index, and each is started as
 * `POST …/import/sync` starts one (`beginSyncAttempt`), unless the origin's fingerprint says
 * nothing changed since the last sync: then only the check is recorded and the schedule moves on.
 * Imports that run or wait for someone (`auth_failed`, a project or LFS choice) are skipped.
 */
import { getImport } from '#data/imports/items';
import { getImportSync } from '#data/imports/sync';
import { type DueSync, dueSyncs, recordCheck } from '#data/imports/sync-due';
import { nextSyncAt } from '#domain/import-sync';
import type { Import } from '#domain/imports';
import { config } from '#shared/config';
import { log } from '#shared/log';
import { originFingerprint } from '#vcs/origin-fingerprint';
import { SETTLED } from './import-sync.ts';
import { beginSyncAttempt, openImportCredentials } from './imports.ts';

export type DueOutcome = 'started' | 'unchanged' | 'skipped';

export interface DueSyncsRun {
  readonly started: number;
  readonly unchanged: number;
  readonly skipped: number;
}

/** The origin's fingerprint, through the import's own access (its credentials, the guard). */
export async function fingerprintOf(record: Import): Promise<string | undefined> {
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
    { maxBytes: config().importMaxBytes, maxObjects: config().importMaxObjects },
  );
}

async function runDue(due: DueSync, at: Date): Promise<DueOutcome> {
  const record = await getImport(due.owner, due.repo);
  // A cancelled import's item is gone with it; a running or waiting one is not disturbed.
  if (!record || record.importId !== due.importId || !SETTLED.has(record.status)) return 'skipped';
  if ((await getImportSync(due.owner, due.repo, due.importId))?.state !== 'following') return 'skipped';
  // A check that fails (the origin is down, refuses the credentials) is not "unchanged": the sync
  // runs and the workflow records what happened (`error`, or `auth_failed` waiting for credentials).
  const fingerprint = await fingerprintOf(record).catch((error: unknown) => {
    log('info', 'origin check failed; syncing', { error: (error as Error).name });
    return undefined;
  });
  await recordCheck(due.owner, due.repo, due.importId, at, nextSyncAt);
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
  return { started: count('started'), unchanged: count('unchanged'), skipped: count('skipped') };
}
