import { pageRequest } from '#domain/pagination';
import { apiHandler } from '#http/middleware/http-stack';
import { pageReply } from '#http/middleware/paged-reply';
import { importAuthors } from '#services/imports';
import { importAuthorJson, importUrl } from '../json/import.ts';

/**
 * GET /repos/:owner/:repo/import/authors?since=: the authors with a higher id, ascending, paged as
 * GitHub pages lists (`per_page` ≤ 100, `page`, `Link`); the links keep `since`.
 */
export const handler = apiHandler({}, async ({ caller, params, query, urls }) => {
  const page = pageRequest(query);
  const { record, authors } = await importAuthors(
    caller,
    params.owner ?? '',
    params.repo ?? '',
    query.since,
    page,
  );
  const url = new URL(`${importUrl(record, urls)}/authors`);
  if (query.since !== undefined) url.searchParams.set('since', query.since);
  return pageReply(authors, page, url.toString(), (items) =>
    items.map((author) => importAuthorJson(author, record, urls)),
  );
});
