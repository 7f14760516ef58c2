import { deleteDeployKey } from '#data/public-keys';
import { getRepository } from '#data/repositories';
import { keyIdParam, mayManageDeployKeys } from '#domain/public-keys';
import { apiHandler } from '#http/middleware/http-stack';
import { notFound, requiresAuthentication } from '#shared/errors';

/** DELETE /repos/:owner/:repo/keys/:key_id: removes a deploy key, for the repository's owner only. */
export const handler = apiHandler('deploy-keys/delete', {}, async ({ caller, params }) => {
  if (caller.kind !== 'user') throw requiresAuthentication();
  const id = keyIdParam(params.key_id);
  const repository = await getRepository(params.owner ?? '', params.repo ?? '');
  if (id === undefined || !repository || !mayManageDeployKeys(repository, caller.user.login))
    throw notFound();
  if (!(await deleteDeployKey(repository.ownerLogin, repository.name, id))) throw notFound();
  return { status: 204 };
});
