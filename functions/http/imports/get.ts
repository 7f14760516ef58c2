import { apiHandler } from '#http/middleware/http-stack';
import { importProgress } from '#services/imports';
import { importJson } from '../json/import.ts';

/** GET /repos/:owner/:repo/import: the import's progress, from one read of the import item. */
export const handler = apiHandler({}, async ({ caller, params, urls }) => {
  const record = await importProgress(caller, params.owner ?? '', params.repo ?? '');
  return { status: 200, body: importJson(record, urls) };
});
