import * as z from 'zod/mini';
import { apiHandler } from '#http/middleware/http-stack';
import { authorizationOf, updateForUser } from '#services/authorizations';
import { notFound } from '#shared/errors';
import { authorizationJson } from '../json/authorization.ts';
import { jsonContext } from './context.ts';
import { idParam, optionalText, RESOURCE, scopeList } from './fields.ts';

const body = z.object({
  scopes: scopeList,
  add_scopes: scopeList,
  remove_scopes: scopeList,
  note: optionalText(1024),
  note_url: optionalText(1024),
  fingerprint: optionalText(255),
});

/** PATCH /authorizations/:id: 200 with `token: ""`. */
export const handler = apiHandler(
  { body: { schema: body, resource: RESOURCE } },
  async ({ body, caller, params, urls }) => {
    const id = idParam(params.authorization_id);
    if (caller.kind !== 'user' || id === undefined) throw notFound();
    const current = await authorizationOf(caller.user.login, id);
    const authorization = await updateForUser(current, {
      scopes: body.scopes,
      addScopes: body.add_scopes,
      removeScopes: body.remove_scopes,
      note: body.note,
      noteUrl: body.note_url,
      fingerprint: body.fingerprint,
    });
    return { status: 200, body: authorizationJson(authorization, await jsonContext([authorization], urls)) };
  },
);
