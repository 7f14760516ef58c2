import { ownedApp, tokensOf } from '#services/apps';
import { developerAppPage } from './developers-views.ts';
import { LIST_LIMIT, settingsHandler } from './settings-page.ts';

/** GET /settings/developers/:client_id: the owner's view of an application. */
export const handler = settingsHandler(undefined, async (request, user) => {
  const app = await ownedApp(user.login, request.params.client_id);
  return developerAppPage(request, app, await tokensOf(app, LIST_LIMIT), Date.now());
});
