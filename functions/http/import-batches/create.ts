import { apiHandler } from '#http/middleware/http-stack';
import { createImportBatch } from '#services/import-batches';
import { batchUrl, importBatchJson } from '../json/import-batch.ts';
import { batchInput, createBody } from './body.ts';

/**
 * POST /user/import-batches (an extension): creates the repositories and imports of many projects
 * at once; 201 with the batch, its imports started up to its concurrency and the rest queued.
 */
export const handler = apiHandler(
  { body: { schema: createBody, resource: 'ImportBatch' } },
  async ({ body, caller, urls }) => {
    const view = await createImportBatch(caller, batchInput(body));
    return {
      status: 201,
      body: importBatchJson(view, urls),
      headers: { Location: batchUrl(view.batch, urls) },
    };
  },
);
