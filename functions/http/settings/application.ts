import { applicationPage } from './applications-views.ts';
import { grantOf } from './grant-of.ts';
import { settingsHandler } from './settings-page.ts';

/** GET /settings/connections/applications/:client_id: review one authorized application (spec §5.7). */
export const handler = settingsHandler('settings/application', undefined, async (request, user) => {
  const { grant, app } = await grantOf(user, request.params.client_id);
  return applicationPage(request, grant, app, Date.now());
});
