import * as z from 'zod/mini';
import { MAX_TITLE_LENGTH } from '#domain/public-keys';
import { apiHandler } from '#http/middleware/http-stack';
import { addDeployKey, managedRepository } from '#services/public-keys';
import { requiresAuthentication } from '#shared/errors';
import { deployKeyJson } from '../json/public-key.ts';

const body = z.object({
  key: z.string(),
  title: z.optional(z.string().check(z.maxLength(MAX_TITLE_LENGTH))),
  read_only: z.optional(z.boolean()),
});

/**
 * POST /repos/:owner/:repo/keys: adds a deploy key (read-write unless `read_only`), remembering
 * who added it and with which application's token, for grant revocation.
 */
export const handler = apiHandler(
  { body: { schema: body, resource: 'PublicKey' } },
  async ({ body, caller, params, urls }) => {
    if (caller.kind !== 'user') throw requiresAuthentication();
    const repository = await managedRepository(caller.user.login, params.owner ?? '', params.repo ?? '');
    const key = await addDeployKey(caller, repository, {
      key: body.key,
      title: body.title,
      readOnly: body.read_only,
    });
    const json = deployKeyJson(key, urls);
    return { status: 201, body: json, headers: { Location: json.url } };
  },
);
