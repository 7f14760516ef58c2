import { apiHandler } from '#http/middleware/http-stack';
import { importRevision } from '#services/imports';
import { importRevisionJson } from '../json/import.ts';

/** GET /repos/:owner/:repo/import/revisions/:origin_revision: one entry of the map, or 404. */
export const handler = apiHandler({}, async ({ caller, params }) => {
  const { revision } = await importRevision(
    caller,
    params.owner ?? '',
    params.repo ?? '',
    params.origin_revision ?? '',
  );
  return { status: 200, body: importRevisionJson(revision) };
});
