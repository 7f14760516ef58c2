import { apiHandler } from '#http/middleware/http-stack';
import { importSync } from '#services/import-sync';
import { importSyncJson } from '../json/import-sync.ts';

/** GET /repos/:owner/:repo/import/sync: whether the repository follows its origin (an extension). */
export const handler = apiHandler({}, async ({ caller, params, urls }) => {
  const { record, sync } = await importSync(caller, params.owner ?? '', params.repo ?? '');
  return { status: 200, body: importSyncJson(record, sync, urls) };
});
