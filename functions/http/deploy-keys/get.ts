import { getDeployKey } from '#data/public-keys';
import { getRepository } from '#data/repositories';
import { keyIdParam, mayManageDeployKeys } from '#domain/public-keys';
import { apiHandler } from '#http/middleware/http-stack';
import { notFound, requiresAuthentication } from '#shared/errors';
import { deployKeyJson } from '../json/public-key.ts';

/** GET /repos/:owner/:repo/keys/:key_id: one deploy key, for the repository's owner only. */
export const handler = apiHandler('deploy-keys/get', {}, async ({ caller, params, urls }) => {
  if (caller.kind !== 'user') throw requiresAuthentication();
  const id = keyIdParam(params.key_id);
  const repository = await getRepository(params.owner ?? '', params.repo ?? '');
  if (id === undefined || !repository || !mayManageDeployKeys(repository, caller.user.login))
    throw notFound();
  const key = await getDeployKey(repository.ownerLogin, repository.name, id);
  if (!key) throw notFound();
  return { status: 200, body: deployKeyJson(key, urls) };
});
