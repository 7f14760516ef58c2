import { apiHandler } from '#http/middleware/http-stack';
import { cancelImport } from '#services/imports';

/** DELETE /repos/:owner/:repo/import: stops and removes the import; the repository is left empty. */
export const handler = apiHandler({}, async ({ caller, params }) => {
  await cancelImport(caller, params.owner ?? '', params.repo ?? '');
  return { status: 204 };
});
