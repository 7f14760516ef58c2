import * as z from 'zod/mini';
import { MAX_TITLE_LENGTH } from '#domain/public-keys';
import { apiHandler } from '#http/middleware/http-stack';
import { addUserKey } from '#services/public-keys';
import { requiresAuthentication } from '#shared/errors';
import { userKeyJson } from '../json/public-key.ts';

const body = z.object({
  key: z.string(),
  title: z.optional(z.string().check(z.maxLength(MAX_TITLE_LENGTH))),
});

/** POST /user/keys: adds an SSH key, remembering which application's token (if any) added it. */
export const handler = apiHandler(
  { body: { schema: body, resource: 'PublicKey' } },
  async ({ body, caller, urls }) => {
    if (caller.kind !== 'user') throw requiresAuthentication();
    const key = await addUserKey(caller, body);
    return {
      status: 201,
      body: userKeyJson(key, urls),
      headers: { Location: `${urls.api}/user/keys/${key.id}` },
    };
  },
);
