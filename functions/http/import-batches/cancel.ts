import { apiHandler } from '#http/middleware/http-stack';
import { cancelImportBatch } from '#services/import-batches';
import { batchActionJson } from '../json/import-batch.ts';
import { batchIdOf } from './body.ts';

/**
 * DELETE /user/import-batches/:batch_id: cancels every import of the batch that is not complete
 * (complete ones are kept) and every queued entry; 200 with what happened to each.
 */
export const handler = apiHandler({}, async ({ caller, params, urls }) => ({
  status: 200,
  body: batchActionJson(await cancelImportBatch(caller, batchIdOf(params)), urls),
}));
