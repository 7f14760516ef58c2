import { apiHandler } from '#http/middleware/http-stack';
import { applyAuthorsFile } from '#services/authors-file';
import { authorsFileResultJson } from '../json/authors-file.ts';
import { authorsFileBody } from './authors-file-body.ts';

/**
 * PUT /repos/:owner/:repo/import/authors (this service's extension, issue 37): maps the authors a
 * git-svn `authors.txt` or a CSV names, in one rewrite. Answers what it mapped, the entries that
 * name no author of the history, and the authors the file does not name.
 */
export const handler = apiHandler(
  { body: { schema: authorsFileBody, resource: 'AuthorsFile' } },
  async ({ body, caller, params, urls }) => ({
    status: 200,
    body: authorsFileResultJson(
      await applyAuthorsFile(caller, params.owner ?? '', params.repo ?? '', body),
      urls,
    ),
  }),
);
