import { personalTokensOf } from '#services/authorizations';
import { settingsHandler } from './settings-page.ts';
import { tokensPage } from './tokens-views.ts';

/** GET /settings/tokens: the user's personal access tokens (spec §5.3) and the form to make one. */
export const handler = settingsHandler(undefined, async (request, user) =>
  tokensPage(request, await personalTokensOf(user.login), Date.now()),
);
