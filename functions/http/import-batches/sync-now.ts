import { apiHandler } from '#http/middleware/http-stack';
import { syncImportBatch } from '#services/import-batches';
import { batchActionJson } from '../json/import-batch.ts';
import { batchIdOf } from './body.ts';

/** POST /user/import-batches/:batch_id/sync: syncs every following import now; 202 with each one's outcome. */
export const handler = apiHandler({}, async ({ caller, params, urls }) => ({
  status: 202,
  body: batchActionJson(await syncImportBatch(caller, batchIdOf(params)), urls),
}));
