import { getRepository } from '#data/repositories';
import { getUser } from '#data/users';
import { canRead } from '#domain/repositories';
import { apiHandler } from '#http/middleware/http-stack';
import { callerHasScope } from '#services/authenticate';
import { notFound } from '#shared/errors';
import { repositoryJson } from '../json/repository.ts';

/** GET /repos/:owner/:repo. A private repository is 404 to everyone but its owner, as on GitHub. */
export const handler = apiHandler('repos/get', {}, async ({ params, caller, urls }) => {
  const [repository, owner] = await Promise.all([
    getRepository(params.owner ?? '', params.repo ?? ''),
    getUser(params.owner ?? ''),
  ]);
  const login = caller.kind === 'user' ? caller.user.login : undefined;
  if (!repository || !owner || !canRead(repository, login)) throw notFound();
  // A token sees private repositories only with the `repo` scope.
  if (repository.private && !callerHasScope(caller, ['repo'])) throw notFound();
  return { status: 200, body: repositoryJson(repository, owner, urls) };
});
