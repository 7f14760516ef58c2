import { hookJson } from '#domain/webhook-payloads';
import { apiHandler } from '#http/middleware/http-stack';
import { pagedReply } from '#http/middleware/paged-reply';
import { hookedRepository, repositoryHooks } from '#services/webhooks';
import { requiresAuthentication } from '#shared/errors';

/** GET /repos/:owner/:repo/hooks: the repository's webhooks in id order, paged. */
export const handler = apiHandler({}, async ({ caller, params, query, urls }) => {
  if (caller.kind !== 'user') throw requiresAuthentication();
  const repository = await hookedRepository(caller.user.login, params.owner ?? '', params.repo ?? '');
  const hooks = await repositoryHooks(repository);
  const url = `${urls.api}/repos/${repository.ownerLogin}/${repository.name}/hooks`;
  return pagedReply(hooks, query, url, (page) => page.map(hookJson));
});
