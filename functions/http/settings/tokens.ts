import { personalTokensOf } from '#services/authorizations';
import { revocationNoticesFor } from '#services/credential-reports';
import { settingsHandler } from './settings-page.ts';
import { tokensPage } from './tokens-views.ts';

/**
 * GET /settings/tokens: the user's personal access tokens (spec §5.3), the form to make one, and
 * the user's tokens of any kind revoked after someone reported them (`POST /credentials/revoke`).
 */
export const handler = settingsHandler(undefined, async (request, user) => {
  const [tokens, revoked] = await Promise.all([
    personalTokensOf(user.login),
    revocationNoticesFor(user.login),
  ]);
  return tokensPage(request, tokens, Date.now(), { revoked });
});
