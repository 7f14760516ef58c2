import { appsOf } from '#services/apps';
import { developersPage } from './developers-views.ts';
import { LIST_LIMIT, settingsHandler } from './settings-page.ts';

/** GET /settings/developers: the user's OAuth applications and the form to register one. */
export const handler = settingsHandler(undefined, async (request, user) =>
  developersPage(request, await appsOf(user.login, LIST_LIMIT)),
);
