import { syncImportBatch } from '#services/import-batches';
import { actOnAll, batchPageHandler } from './batch-page.ts';

/** POST /imports/batches/:batch_id/sync: the API's POST …/import-batches/:id/sync (every following import syncs now). */
export const handler = batchPageHandler((request, caller, batchId) =>
  actOnAll(request, caller, batchId, 'sync-started', () => syncImportBatch(caller, batchId)),
);
