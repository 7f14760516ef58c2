import * as z from 'zod/mini';
import { isValidRepositoryName } from '#domain/repositories';
import { apiHandler } from '#http/middleware/http-stack';
import { callerHasScope } from '#services/authenticate';
import { createForOwner } from '#services/repositories';
import { notFound, requiresAuthentication } from '#shared/errors';
import { repositoryJson } from '../json/repository.ts';

export const body = z.object({
  name: z
    .string()
    .check(
      z.refine(
        isValidRepositoryName,
        'name may only contain letters, digits, ".", "-" and "_" (at most 100)',
      ),
    ),
  description: z.optional(z.nullable(z.string().check(z.maxLength(350)))),
  homepage: z.optional(z.nullable(z.string().check(z.maxLength(255)))),
  private: z.optional(z.boolean()),
});

/** POST /user/repos: creates a repository owned by the authenticated user. */
export const handler = apiHandler(
  { body: { schema: body, resource: 'Repository' } },
  async ({ body, caller, urls }) => {
    if (caller.kind !== 'user') throw requiresAuthentication();
    // `public_repo` (the route's lesser scope) may create public repositories only.
    if (body.private && !callerHasScope(caller, ['repo'])) throw notFound();
    const repository = await createForOwner(caller.user, body);
    return {
      status: 201,
      body: repositoryJson(repository, caller.user, urls),
      headers: { Location: `${urls.api}/repos/${caller.user.login}/${repository.name}` },
    };
  },
);
