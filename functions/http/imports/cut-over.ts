import { apiHandler } from '#http/middleware/http-stack';
import { cutOverImport } from '#services/import-sync';
import { importSyncJson } from '../json/import-sync.ts';

/** DELETE /repos/:owner/:repo/import/sync: the cut-over; pushes are accepted again (an extension). */
export const handler = apiHandler({}, async ({ caller, params, urls }) => {
  const { record, sync } = await cutOverImport(caller, params.owner ?? '', params.repo ?? '');
  return { status: 200, body: importSyncJson(record, sync, urls) };
});
