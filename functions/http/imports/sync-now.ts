import { apiHandler } from '#http/middleware/http-stack';
import { syncNow } from '#services/import-sync';
import { importJson } from '../json/import.ts';

/**
 * POST /repos/:owner/:repo/import/sync: syncs a followed origin now (an extension); 202 with the
 * import, whose status goes through the import's statuses back to `complete`.
 */
export const handler = apiHandler({}, async ({ caller, params, urls }) => {
  const record = await syncNow(caller, params.owner ?? '', params.repo ?? '');
  return { status: 202, body: importJson(record, urls) };
});
