import * as z from 'zod/mini';
import { createUserKey } from '#data/public-keys';
import { INVALID_KEY, KEY_IN_USE, keyTitle, MAX_TITLE_LENGTH, parsePublicKey } from '#domain/public-keys';
import { apiHandler } from '#http/middleware/http-stack';
import { requiresAuthentication, validationFailed } from '#shared/errors';
import { userKeyJson } from '../json/public-key.ts';

const body = z.object({
  key: z.string(),
  title: z.optional(z.string().check(z.maxLength(MAX_TITLE_LENGTH))),
});

/** POST /user/keys: adds an SSH key, remembering which application's token (if any) added it. */
export const handler = apiHandler(
  'keys/create-for-user',
  { body: { schema: body, resource: 'PublicKey' } },
  async ({ body, caller, urls }) => {
    if (caller.kind !== 'user') throw requiresAuthentication();
    const parsed = parsePublicKey(body.key);
    if (!parsed.valid) throw validationFailed([INVALID_KEY]);
    const result = await createUserKey(caller.user.login, {
      key: parsed.key,
      fingerprint: parsed.fingerprint,
      title: keyTitle(body.title, parsed.comment),
      clientId: caller.via === 'token' ? caller.token.clientId : '',
    });
    if (result.kind === 'key-taken') throw validationFailed([KEY_IN_USE]);
    return {
      status: 201,
      body: userKeyJson(result.key, urls),
      headers: { Location: `${urls.api}/user/keys/${result.key.id}` },
    };
  },
);
