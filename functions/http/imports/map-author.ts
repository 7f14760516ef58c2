import * as z from 'zod/mini';
import { isAuthorEmail, isAuthorName } from '#domain/imports';
import { apiHandler } from '#http/middleware/http-stack';
import { mapImportAuthor } from '#services/imports';
import { importAuthorJson } from '../json/import.ts';

export const body = z.object({
  email: z.optional(
    z.string().check(z.refine(isAuthorEmail, 'email must look like name@host (at most 255)')),
  ),
  name: z.optional(
    z.string().check(z.refine(isAuthorName, 'name must be one non-blank line without < or > (at most 255)')),
  ),
});

/** PATCH /repos/:owner/:repo/import/authors/:author_id: maps an author's name and/or email. */
export const handler = apiHandler(
  { body: { schema: body, resource: 'ImportAuthor' } },
  async ({ body, caller, params, urls }) => {
    const { record, author } = await mapImportAuthor(
      caller,
      params.owner ?? '',
      params.repo ?? '',
      Number(params.author_id),
      { name: body.name, email: body.email },
    );
    return { status: 200, body: importAuthorJson(author, record, urls) };
  },
);
