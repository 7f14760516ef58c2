import { securityLogPage as logPage } from '#services/security-log';
import { securityLogPage } from './security-log-views.ts';
import { settingsHandler } from './settings-page.ts';

/** How many events a page of the settings page shows. */
const PER_PAGE = 50;

/** GET /settings/security-log: the signed-in person's own security events (issue 38). */
export const handler = settingsHandler(undefined, async (request, user) => {
  const { events, next } = await logPage(user.login, request.query.cursor || undefined, PER_PAGE);
  return securityLogPage(events, next);
});
