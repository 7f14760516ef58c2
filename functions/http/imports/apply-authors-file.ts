import { apiHandler } from '#http/middleware/http-stack';
import { applyAuthorsFile } from '#services/authors-file';
import { importAuthorJson, importUrl } from '../json/import.ts';
import { authorsFileBody } from './authors-file-body.ts';

/**
 * PUT /repos/:owner/:repo/import/authors (this service's extension, issue 37): maps the authors a
 * git-svn `authors.txt` or a CSV names, in one rewrite. Answers what it mapped, the entries that
 * name no author of the history, and the authors the file does not name.
 */
export const handler = apiHandler(
  { body: { schema: authorsFileBody, resource: 'AuthorsFile' } },
  async ({ body, caller, params, urls }) => {
    const result = await applyAuthorsFile(caller, params.owner ?? '', params.repo ?? '', body);
    const { record } = result;
    return {
      status: 200,
      body: {
        format: result.format,
        rewriting: result.rewriting,
        changed: result.changed,
        mapped: result.mapped.map(({ author, name, email }) =>
          importAuthorJson({ ...author, name, email }, record, urls),
        ),
        not_in_history: result.notInHistory.map(({ line, origin, name, email }) => ({
          line,
          origin,
          name,
          email,
        })),
        not_in_file: result.notInFile.map((author) => importAuthorJson(author, record, urls)),
        import_url: importUrl(record, urls),
      },
    };
  },
);
