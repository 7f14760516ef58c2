import * as z from 'zod/mini';
import { apiHandler } from '#http/middleware/http-stack';
import { createForUser } from '#services/authorizations';
import { requiresAuthentication } from '#shared/errors';
import { authorizationJson } from '../json/authorization.ts';
import { jsonContext } from './context.ts';
import { optionalText, RESOURCE, scopeList } from './fields.ts';

const body = z.object({
  scopes: scopeList,
  note: z.string().check(z.minLength(1), z.maxLength(1024)),
  note_url: optionalText(1024),
  client_id: optionalText(20),
  client_secret: optionalText(40),
  fingerprint: optionalText(255),
});

/** POST /authorizations: 201 with the full token (the only time it is shown) and Location. */
export const handler = apiHandler(
  { body: { schema: body, resource: RESOURCE } },
  async ({ body, caller, urls }) => {
    if (caller.kind !== 'user') throw requiresAuthentication();
    const { authorization, token } = await createForUser(caller.user.login, {
      scopes: body.scopes,
      note: body.note,
      noteUrl: body.note_url,
      clientId: body.client_id,
      clientSecret: body.client_secret,
      fingerprint: body.fingerprint,
    });
    return {
      status: 201,
      body: authorizationJson(authorization, { ...(await jsonContext([authorization], urls)), token }),
      headers: { Location: `${urls.api}/authorizations/${authorization.id}` },
    };
  },
);
