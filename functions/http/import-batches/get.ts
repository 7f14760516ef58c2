import { apiHandler } from '#http/middleware/http-stack';
import { importBatch } from '#services/import-batches';
import { importBatchJson } from '../json/import-batch.ts';
import { batchIdOf } from './body.ts';

/** GET /user/import-batches/:batch_id: the batch with every import's state. */
export const handler = apiHandler({}, async ({ caller, params, urls }) => ({
  status: 200,
  body: importBatchJson(await importBatch(caller, batchIdOf(params)), urls),
}));
