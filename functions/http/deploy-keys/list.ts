import { listDeployKeys } from '#data/public-keys';
import { getRepository } from '#data/repositories';
import { mayManageDeployKeys } from '#domain/public-keys';
import { apiHandler } from '#http/middleware/http-stack';
import { pagedReply } from '#http/middleware/paged-reply';
import { notFound, requiresAuthentication } from '#shared/errors';
import { deployKeyJson } from '../json/public-key.ts';

/** GET /repos/:owner/:repo/keys: the repository's deploy keys, paged in id order, for its owner only. */
export const handler = apiHandler('deploy-keys/list', {}, async ({ caller, params, query, urls }) => {
  if (caller.kind !== 'user') throw requiresAuthentication();
  const repository = await getRepository(params.owner ?? '', params.repo ?? '');
  if (!repository || !mayManageDeployKeys(repository, caller.user.login)) throw notFound();
  const keys = await listDeployKeys(repository.ownerLogin, repository.name);
  const url = `${urls.api}/repos/${repository.ownerLogin}/${repository.name}/keys`;
  return pagedReply(keys, query, url, (page) => page.map((key) => deployKeyJson(key, urls)));
});
