import type { OAuthFields } from '#http/middleware/oauth-stack';
import type { IssuedToken } from '#services/user-tokens';

/**
 * A token endpoint answer for any grant: GitHub's fields in GitHub's order; `expires_in`,
 * `refresh_token` and `refresh_token_expires_in` only for an expiring token (GitHub leaves them
 * out when expiration is off).
 */
export const tokenFields = (issued: IssuedToken): OAuthFields => ({
  access_token: issued.accessToken,
  ...(issued.expiresIn !== undefined ? { expires_in: issued.expiresIn } : {}),
  ...(issued.refreshToken !== undefined ? { refresh_token: issued.refreshToken } : {}),
  ...(issued.refreshTokenExpiresIn !== undefined
    ? { refresh_token_expires_in: issued.refreshTokenExpiresIn }
    : {}),
  scope: issued.scopes.join(','),
  token_type: 'bearer',
});
