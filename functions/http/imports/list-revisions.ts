import { pageRequest } from '#domain/pagination';
import { apiHandler } from '#http/middleware/http-stack';
import { pageReply } from '#http/middleware/paged-reply';
import { importRevisions } from '#services/imports';
import { importRevisionJson, importUrl } from '../json/import.ts';

/**
 * GET /repos/:owner/:repo/import/revisions: the revision map in origin order, each origin revision
 * with the commit it was published as, paged as GitHub pages lists (`per_page` ≤ 100, `page`, `Link`).
 */
export const handler = apiHandler({}, async ({ caller, params, query, urls }) => {
  const page = pageRequest(query);
  const { record, revisions } = await importRevisions(caller, params.owner ?? '', params.repo ?? '', page);
  return pageReply(revisions, page, `${importUrl(record, urls)}/revisions`, (items) =>
    items.map(importRevisionJson),
  );
});
