import { ownedApp, rotateSecret, tokensOf } from '#services/apps';
import { developerAppPage } from './developers-views.ts';
import { LIST_LIMIT, paths, settingsHandler } from './settings-page.ts';

/**
 * POST /settings/developers/:client_id/secret: a new client secret, shown this once; the old one
 * fails on the very next request. Tokens already issued keep working.
 */
export const handler = settingsHandler(paths.developers, async (request, user) => {
  const app = await ownedApp(user.login, request.params.client_id);
  const clientSecret = await rotateSecret(app);
  return developerAppPage(request, app, await tokensOf(app, LIST_LIMIT), Date.now(), {
    fresh: { clientSecret, registered: false },
  });
});
