import * as z from 'zod/mini';
import { apiHandler } from '#http/middleware/http-stack';
import { requiresAuthentication } from '#shared/errors';
import { runGraphql } from './run.ts';

/** GraphQL over HTTP's fields; their types are checked by `runGraphql`, which answers in GraphQL's shape. */
const body = z.object({
  query: z.optional(z.unknown()),
  variables: z.optional(z.unknown()),
  operationName: z.optional(z.unknown()),
});

/**
 * POST /api/graphql: the small GraphQL API (`schema.ts`). Authenticated as every user route, with
 * the scope headers; a document's own errors are 200 with `errors`, as GitHub answers them.
 */
export const handler = apiHandler(
  { body: { schema: body, resource: 'GraphQL' } },
  async ({ body, caller, urls }) => {
    if (caller.kind !== 'user') throw requiresAuthentication();
    return { status: 200, body: await runGraphql(body, caller, urls) };
  },
);
