import { appDirectory } from '#services/apps';
import { grantsForUser } from '#services/grants';
import { applicationsPage } from './applications-views.ts';
import { settingsHandler } from './settings-page.ts';

/** GET /settings/connections/applications: the user's grants (spec §2.1: the list matches the API's). */
export const handler = settingsHandler(undefined, async (request, user) => {
  const grants = await grantsForUser(user.login);
  const apps = await appDirectory(grants.map((grant) => grant.clientId));
  return applicationsPage(
    request,
    grants.map((grant) => ({ grant, app: apps.get(grant.clientId) })),
    Date.now(),
  );
});
