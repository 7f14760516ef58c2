import { importPageHandler, pageData } from './import-page.ts';
import { importPage } from './views.ts';

/** GET /:owner/:repo/import: the import's progress, authors and large files, for the owner only. */
export const handler = importPageHandler(async (request, caller, repo) =>
  importPage(request, await pageData(caller, repo)),
);
