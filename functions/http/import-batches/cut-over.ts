import { apiHandler } from '#http/middleware/http-stack';
import { cutOverImportBatch } from '#services/import-batches';
import { batchActionJson } from '../json/import-batch.ts';
import { batchIdOf } from './body.ts';

/** DELETE /user/import-batches/:batch_id/sync: cuts every following import over; 200 with each one's outcome. */
export const handler = apiHandler({}, async ({ caller, params, urls }) => ({
  status: 200,
  body: batchActionJson(await cutOverImportBatch(caller, batchIdOf(params)), urls),
}));
