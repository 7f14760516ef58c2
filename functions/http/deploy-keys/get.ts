import { keyIdParam } from '#domain/public-keys';
import { apiHandler } from '#http/middleware/http-stack';
import { deployKey, managedRepository } from '#services/public-keys';
import { notFound, requiresAuthentication } from '#shared/errors';
import { deployKeyJson } from '../json/public-key.ts';

/** GET /repos/:owner/:repo/keys/:key_id: one deploy key, for the repository's owner only. */
export const handler = apiHandler({}, async ({ caller, params, urls }) => {
  if (caller.kind !== 'user') throw requiresAuthentication();
  const id = keyIdParam(params.key_id);
  if (id === undefined) throw notFound();
  const repository = await managedRepository(caller.user.login, params.owner ?? '', params.repo ?? '');
  return { status: 200, body: deployKeyJson(await deployKey(repository, id), urls) };
});
