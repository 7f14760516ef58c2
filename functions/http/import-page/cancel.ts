import { cancelImport } from '#services/imports';
import { changeThenBack, importPageHandler } from './import-page.ts';

/** POST /:owner/:repo/import/cancel: what the API's DELETE does; the page then says there is no import. */
export const handler = importPageHandler((request, caller, repo) =>
  changeThenBack(request, caller, repo, () => cancelImport(caller, repo.owner, repo.repo)),
);
