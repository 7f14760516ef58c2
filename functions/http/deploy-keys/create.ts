import * as z from 'zod/mini';
import { createDeployKey } from '#data/public-keys';
import { getRepository } from '#data/repositories';
import {
  INVALID_KEY,
  KEY_IN_USE,
  keyTitle,
  MAX_TITLE_LENGTH,
  mayManageDeployKeys,
  parsePublicKey,
} from '#domain/public-keys';
import { apiHandler } from '#http/middleware/http-stack';
import { notFound, requiresAuthentication, validationFailed } from '#shared/errors';
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
  'deploy-keys/create',
  { body: { schema: body, resource: 'PublicKey' } },
  async ({ body, caller, params, urls }) => {
    if (caller.kind !== 'user') throw requiresAuthentication();
    const repository = await getRepository(params.owner ?? '', params.repo ?? '');
    if (!repository || !mayManageDeployKeys(repository, caller.user.login)) throw notFound();
    const parsed = parsePublicKey(body.key);
    if (!parsed.valid) throw validationFailed([INVALID_KEY]);
    const result = await createDeployKey(
      { owner: repository.ownerLogin, repo: repository.name, repositoryId: repository.id },
      {
        key: parsed.key,
        fingerprint: parsed.fingerprint,
        title: keyTitle(body.title, parsed.comment),
        readOnly: body.read_only ?? false,
        createdBy: caller.user.login,
        clientId: caller.via === 'token' ? caller.token.clientId : '',
      },
    );
    if (result.kind === 'repository-gone') throw notFound();
    if (result.kind === 'key-taken') throw validationFailed([KEY_IN_USE]);
    const json = deployKeyJson(result.key, urls);
    return { status: 201, body: json, headers: { Location: json.url } };
  },
);
