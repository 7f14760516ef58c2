import { apiHandler } from '#http/middleware/http-stack';
import { importAuthors } from '#services/imports';
import { importAuthorJson } from '../json/import.ts';

/** GET /repos/:owner/:repo/import/authors?since=: every author with a higher id, ascending, unpaged. */
export const handler = apiHandler({}, async ({ caller, params, query, urls }) => {
  const { record, authors } = await importAuthors(caller, params.owner ?? '', params.repo ?? '', query.since);
  return { status: 200, body: authors.map((author) => importAuthorJson(author, record, urls)) };
});
