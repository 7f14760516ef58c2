import { oauthJsonHandler } from '#http/middleware/oauth-stack';
import { revokeToken } from '#services/oauth-tokens';

/** POST /login/oauth/revoke (RFC 7009): the client's own token is deleted; any other changes nothing. */
export const handler = oauthJsonHandler(async ({ params, client }) => {
  await revokeToken(client, params.token);
  return {};
});
