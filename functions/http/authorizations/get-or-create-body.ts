import * as z from 'zod/mini';
import type { ApiRequest, Reply } from '#http/middleware/http-stack';
import { getOrCreateForApp } from '#services/authorizations';
import { requiresAuthentication } from '#shared/errors';
import { authorizationJson } from '../json/authorization.ts';
import { jsonContext } from './context.ts';
import { optionalText, scopeList } from './fields.ts';

export const getOrCreateBody = z.object({
  client_secret: z.string().check(z.minLength(1), z.maxLength(40)),
  scopes: scopeList,
  note: optionalText(1024),
  note_url: optionalText(1024),
  fingerprint: optionalText(255),
});

/**
 * Both get-or-create routes: 201 with the new token when created, 200 with `token: ""` when the
 * authorization existed; `Location` in both cases. The fingerprint comes from the path when the
 * route has one, else from the body.
 */
export async function getOrCreate({
  body,
  caller,
  params,
  urls,
}: ApiRequest<z.infer<typeof getOrCreateBody>>): Promise<Reply> {
  if (caller.kind !== 'user') throw requiresAuthentication();
  const result = await getOrCreateForApp(caller.user.login, params.client_id ?? '', {
    clientSecret: body.client_secret,
    scopes: body.scopes,
    note: body.note,
    noteUrl: body.note_url,
    fingerprint: params.fingerprint ?? body.fingerprint,
  });
  const context = await jsonContext([result.authorization], urls);
  return {
    status: result.created ? 201 : 200,
    body: authorizationJson(result.authorization, {
      ...context,
      ...(result.token ? { token: result.token } : {}),
    }),
    headers: { Location: `${urls.api}/authorizations/${result.authorization.id}` },
  };
}
