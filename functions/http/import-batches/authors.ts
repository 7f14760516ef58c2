import { apiHandler } from '#http/middleware/http-stack';
import { applyAuthorsFileToBatch } from '#services/import-batch-authors';
import { authorsFileBody } from '../imports/authors-file-body.ts';
import { batchAuthorsJson } from '../json/import-batch.ts';
import { batchIdOf } from './body.ts';

/**
 * PUT /user/import-batches/:batch_id/authors (issue 37): one authors file (the body of PUT
 * …/import/authors) for every complete import of the batch; 200 with each entry's outcome.
 */
export const handler = apiHandler(
  { body: { schema: authorsFileBody, resource: 'AuthorsFile' } },
  async ({ body, caller, params, urls }) => ({
    status: 200,
    body: batchAuthorsJson(await applyAuthorsFileToBatch(caller, batchIdOf(params), body), urls),
  }),
);
