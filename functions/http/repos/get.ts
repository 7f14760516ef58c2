import { apiHandler } from '#http/middleware/http-stack';
import { visibleRepository } from '#services/repositories';
import { repositoryJson } from '../json/repository.ts';

/** GET /repos/:owner/:repo. A private repository is 404 to everyone but its owner, as on GitHub. */
export const handler = apiHandler({}, async ({ params, caller, urls }) => {
  const { repository, owner } = await visibleRepository(caller, params.owner ?? '', params.repo ?? '');
  return { status: 200, body: repositoryJson(repository, owner, urls) };
});
