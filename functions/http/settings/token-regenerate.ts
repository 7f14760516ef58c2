import { personalTokensOf, resetFor } from '#services/authorizations';
import { HttpError } from '#shared/errors';
import { personalToken } from './personal-tokens.ts';
import { paths, settingsHandler } from './settings-page.ts';
import { tokensPage } from './tokens-views.ts';

/**
 * POST /settings/tokens/:authorization_id/regenerate: a new token value, as the API's reset does
 * (spec §3.3): the old value fails at once; the new one is shown this once.
 */
export const handler = settingsHandler(paths.tokens, async (request, user) => {
  const reset = await resetFor(await personalToken(user, request.params.authorization_id));
  if (!reset)
    throw new HttpError(409, 'This token was changed or deleted meanwhile. Reload the page and try again.');
  return tokensPage(request, await personalTokensOf(user.login), Date.now(), {
    fresh: { ...reset, regenerated: true },
  });
});
