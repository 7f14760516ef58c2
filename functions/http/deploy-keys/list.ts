import { apiHandler } from '#http/middleware/http-stack';
import { pagedReply } from '#http/middleware/paged-reply';
import { deployKeys, managedRepository } from '#services/public-keys';
import { requiresAuthentication } from '#shared/errors';
import { deployKeyJson } from '../json/public-key.ts';

/** GET /repos/:owner/:repo/keys: the repository's deploy keys, paged in id order, for its owner only. */
export const handler = apiHandler({}, async ({ caller, params, query, urls }) => {
  if (caller.kind !== 'user') throw requiresAuthentication();
  const repository = await managedRepository(caller.user.login, params.owner ?? '', params.repo ?? '');
  const keys = await deployKeys(repository);
  const url = `${urls.api}/repos/${repository.ownerLogin}/${repository.name}/keys`;
  return pagedReply(keys, query, url, (page) => page.map((key) => deployKeyJson(key, urls)));
});
