import * as z from 'zod/mini';
import { apiHandler } from '#http/middleware/http-stack';
import { followImportBatch } from '#services/import-batches';
import { batchActionJson } from '../json/import-batch.ts';
import { batchIdOf, intervalField } from './body.ts';

export const body = z.object({ interval_minutes: intervalField });

/**
 * PUT /user/import-batches/:batch_id/sync: every complete import follows its origin with this
 * interval; the others follow once they complete. 200 with what happened to each.
 */
export const handler = apiHandler(
  { body: { schema: body, resource: 'ImportBatch' } },
  async ({ body, caller, params, urls }) => ({
    status: 200,
    body: batchActionJson(await followImportBatch(caller, batchIdOf(params), body.interval_minutes), urls),
  }),
);
