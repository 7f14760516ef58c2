import { AUTHORS_DOWNLOAD_FORMATS, type AuthorsDownloadFormat } from '#domain/authors-file';
import { pageRequest } from '#domain/pagination';
import { apiHandler } from '#http/middleware/http-stack';
import { pageReply } from '#http/middleware/paged-reply';
import { authorsFileDownload } from '#services/authors-file';
import { importAuthors, invalid } from '#services/imports';
import { importAuthorJson, importUrl } from '../json/import.ts';

/**
 * GET /repos/:owner/:repo/import/authors?since=: the authors with a higher id, ascending, paged as
 * GitHub pages lists (`per_page` ≤ 100, `page`, `Link`); the links keep `since`. With `format`
 * (this service's extension): every author's current mapping as a file, `authors_txt`, `csv` or
 * `mailmap`.
 */
export const handler = apiHandler({}, async ({ caller, params, query, urls }) => {
  if (query.format !== undefined) {
    const format = query.format as AuthorsDownloadFormat;
    if (!AUTHORS_DOWNLOAD_FORMATS.includes(format))
      throw invalid('format', 'format must be one of authors_txt, csv, mailmap', 'ImportAuthor');
    return {
      status: 200,
      file: await authorsFileDownload(caller, params.owner ?? '', params.repo ?? '', format),
    };
  }
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
