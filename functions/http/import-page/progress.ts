import { authorsFilter } from './authors-view.ts';
import { importPageHandler, pageData } from './import-page.ts';
import { importPage } from './views.ts';

/**
 * GET /:owner/:repo/import?page=&authors=: the import's progress, one page of its authors (those
 * matching the filter `authors`, when given) and its large files, for the owner only.
 */
export const handler = importPageHandler(async (request, caller, repo) =>
  importPage(request, await pageData(caller, repo, request.query.page, authorsFilter(request.query))),
);
