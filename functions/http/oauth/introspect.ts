import { oauthJsonHandler } from '#http/middleware/oauth-stack';
import { introspectToken } from '#services/oauth-tokens';

const seconds = (iso: string): number => Math.floor(Date.parse(iso) / 1000);

/** POST /login/oauth/introspect (RFC 7662): the client's own active token, or `{"active": false}`. */
export const handler = oauthJsonHandler(async ({ params, client }) => {
  const active = await introspectToken(client, params.token);
  if (!active) return { active: false };
  return {
    active: true,
    scope: active.scopes.join(' '),
    client_id: active.clientId,
    username: active.login,
    token_type: 'bearer',
    iat: seconds(active.issuedAt),
    ...(active.expiresAt === null ? {} : { exp: seconds(active.expiresAt) }),
  };
});
