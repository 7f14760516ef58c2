import { grantForApp } from '#services/grants';
import { applicationPage } from './applications-views.ts';
import { settingsHandler } from './settings-page.ts';

/** GET /settings/connections/applications/:client_id: review one authorized application (spec §5.7). */
export const handler = settingsHandler(undefined, async (request, user) => {
  const { grant, app } = await grantForApp(user.login, request.params.client_id);
  return applicationPage(request, grant, app, Date.now());
});
