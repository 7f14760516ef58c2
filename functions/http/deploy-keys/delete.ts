import { keyIdParam } from '#domain/public-keys';
import { apiHandler } from '#http/middleware/http-stack';
import { managedRepository, removeDeployKey } from '#services/public-keys';
import { notFound, requiresAuthentication } from '#shared/errors';

/** DELETE /repos/:owner/:repo/keys/:key_id: removes a deploy key, for the repository's owner only. */
export const handler = apiHandler({}, async ({ caller, params }) => {
  if (caller.kind !== 'user') throw requiresAuthentication();
  const id = keyIdParam(params.key_id);
  if (id === undefined) throw notFound();
  const repository = await managedRepository(caller.user.login, params.owner ?? '', params.repo ?? '');
  await removeDeployKey(repository, id);
  return { status: 204 };
});
