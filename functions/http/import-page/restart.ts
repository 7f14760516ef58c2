import { updateImport } from '#services/imports';
import { changeThenBack, importPageHandler } from './import-page.ts';

/** POST /:owner/:repo/import/restart: the API's PATCH with an empty body (a new attempt from the start). */
export const handler = importPageHandler((request, caller, repo) =>
  changeThenBack(request, caller, repo, () => updateImport(caller, repo.owner, repo.repo, {})),
);
