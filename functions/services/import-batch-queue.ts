/**
 * The queue of an import batch (docs/decisions/0145-import-batch-queue.md): the workflow's settle
 * points release an import's slot and start what fits (`batchImportSettled`); the sync scheduler,
 * once a minute, is the safety net for settle points and starters that died (`tendBatchQueues`).
 * Taking a slot is a conditional write on the batch's running count, so two starters never
 * exceed its bound.
 */
import {
  batchesInMotion,
  getBatch,
  listEntries,
  releaseSlot,
  returnTurn,
  takeTurn,
} from '#data/import-batches';
import { getImport } from '#data/imports/items';
import { type BatchEntry, releasesSlot } from '#domain/import-batches';
import { firstStatus } from '#domain/imports';
import { HttpError } from '#shared/errors';
import { log } from '#shared/log';
import { noticeInterrupted } from './import-interrupted.ts';
import { followOnCompletion } from './import-sync.ts';
import { launchNewImport } from './imports.ts';

/**
 * After an import's status changed to one that `releasesSlot`: when it belongs to a batch and
 * still holds its slot, a complete import follows as the batch asks, the slot is released (once),
 * and the next queued entries start. Never throws (it runs after the import's own write).
 */
export async function batchImportSettled(owner: string, repo: string): Promise<void> {
  try {
    const record = await getImport(owner, repo);
    if (!record?.batch || !releasesSlot(record.status)) return;
    const { id, entry } = record.batch;
    const batch = await getBatch(owner, id);
    if (!batch) return;
    if (record.status === 'complete' && batch.options.follow)
      await followOnCompletion(record, batch.options.follow.intervalMinutes);
    await releaseSlot(owner, id, entry);
    await startQueuedEntries(owner, id);
  } catch (error) {
    log('warn', 'moving an import batch on failed; the scheduler will', { error: (error as Error).message });
  }
}

/**
 * Starts queued entries of a batch while slots are free (each slot a conditional write on the
 * batch's running count). Returns how many started.
 */
export async function startQueuedEntries(owner: string, batchId: number): Promise<number> {
  const batch = await getBatch(owner, batchId);
  if (!batch || batch.queued <= 0) return 0;
  let started = 0;
  for (const entry of await listEntries(owner, batchId)) {
    if (entry.state !== 'queued') continue;
    const turn = await takeTurn(owner, batchId, entry.index, batch.options.concurrency);
    if (turn === 'full') break;
    if (turn === 'not-queued') continue;
    try {
      await launchNewImport({
        ownerLogin: owner,
        repoName: entry.repository,
        importId: entry.importId,
        vcs: entry.vcs,
        vcsUrl: entry.vcsUrl,
        tfvcProject: entry.tfvcProject,
        status: firstStatus(entry.vcs),
        choices: batch.options.choices,
        sealedCredentials: turn.sealedCredentials,
        chosenProject: entry.project,
        useLfs: batch.options.useLfs,
        batch: { id: batchId, entry: entry.index },
      });
      started++;
    } catch (error) {
      log('warn', 'a batch entry did not start', { error: (error as Error).message });
      // The workflow did not answer (or this function may not start it): the entry waits for the
      // next settle point or the scheduler. A refusal of the repository (409) is final.
      if (!(error instanceof HttpError) || error.status === 503) {
        await returnTurn(owner, batchId, entry.index);
        break;
      }
      await releaseSlot(owner, batchId, entry.index, error.message);
    }
  }
  return started;
}

/** A starter's longest life: the route and task functions that start imports end within 30 s. */
const STARTER_SECONDS = 60;
const startedLongAgo = (entry: BatchEntry): boolean =>
  entry.startedAt === undefined || Date.now() - Date.parse(entry.startedAt) > STARTER_SECONDS * 1000;

/**
 * The safety net (the sync scheduler, once a minute): every batch whose queue still moves releases
 * the slots of imports that have settled, are gone, or whose execution ended without a word, then
 * starts what fits. Returns how many entries started.
 */
export async function tendBatchQueues(): Promise<number> {
  let started = 0;
  for (const { owner, id } of await batchesInMotion()) {
    try {
      for (const entry of await listEntries(owner, id)) {
        if (entry.slot !== 'held') continue;
        const stored = await getImport(owner, entry.repository);
        const record =
          stored && stored.importId === entry.importId ? await noticeInterrupted(stored) : undefined;
        if (record && !releasesSlot(record.status)) continue;
        if (record) await batchImportSettled(owner, entry.repository);
        else if (entry.state === 'cancelled') await releaseSlot(owner, id, entry.index);
        // No import and no cancel: its starter died between taking the turn and making the import
        // (a live starter takes a few seconds at most); the entry waits for its turn again.
        else if (startedLongAgo(entry)) await returnTurn(owner, id, entry.index);
      }
      started += await startQueuedEntries(owner, id);
    } catch (error) {
      log('warn', 'tending an import batch failed', { owner, batch: id, error: (error as Error).message });
    }
  }
  return started;
}
