import { pageRequest } from '#domain/pagination';
import { apiHandler } from '#http/middleware/http-stack';
import { pageReply } from '#http/middleware/paged-reply';
import { listImportBatches } from '#services/import-batches';
import { importBatchSummaryJson } from '../json/import-batch.ts';

/** GET /user/import-batches: the caller's batches, newest first, paged (`Link`). */
export const handler = apiHandler({}, async ({ caller, query, urls }) => {
  const request = pageRequest(query);
  const page = await listImportBatches(caller, request);
  return pageReply(page, request, `${urls.api}/user/import-batches`, (items) =>
    items.map((batch) => importBatchSummaryJson(batch, urls)),
  );
});
