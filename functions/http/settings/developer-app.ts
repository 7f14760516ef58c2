import { tokensOfApp } from '#data/app-directory';
import { developerAppPage } from './developers-views.ts';
import { ownedApp } from './owned-app.ts';
import { LIST_LIMIT, settingsHandler } from './settings-page.ts';

/** GET /settings/developers/:client_id: the owner's view of an application. */
export const handler = settingsHandler('settings/developer-app', undefined, async (request, user) => {
  const app = await ownedApp(user, request.params.client_id);
  return developerAppPage(request, app, await tokensOfApp(app.clientId, LIST_LIMIT), Date.now());
});
