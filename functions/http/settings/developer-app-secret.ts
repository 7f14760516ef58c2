import { rotateClientSecret, tokensOfApp } from '#data/app-directory';
import { hashSecret, newClientSecret } from '#domain/apps';
import { developerAppPage } from './developers-views.ts';
import { ownedApp } from './owned-app.ts';
import { LIST_LIMIT, pageNotFound, paths, settingsHandler } from './settings-page.ts';

/**
 * POST /settings/developers/:client_id/secret: a new client secret, shown this once; the old one
 * fails on the very next request. Tokens already issued keep working.
 */
export const handler = settingsHandler(
  'settings/developer-app-secret',
  paths.developers,
  async (request, user) => {
    const app = await ownedApp(user, request.params.client_id);
    const clientSecret = newClientSecret();
    if (!(await rotateClientSecret(app.clientId, app.ownerLogin, hashSecret(clientSecret))))
      throw pageNotFound();
    return developerAppPage(request, app, await tokensOfApp(app.clientId, LIST_LIMIT), Date.now(), {
      fresh: { clientSecret, registered: false },
    });
  },
);
