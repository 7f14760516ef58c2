import { ownedApp, setAppSwitch } from '#services/apps';
import { readExpireUserTokens } from './app-form.ts';
import { pageNotFound, paths, seeOther, settingsHandler } from './settings-page.ts';

/**
 * POST /settings/developers/:client_id/token-expiration (checkbox `expire_user_tokens`): the owner
 * turns "Expire user authorization tokens" on or off. Only tokens issued afterwards change.
 */
export const handler = settingsHandler(paths.developers, async (request, user) => {
  const app = await ownedApp(user.login, request.params.client_id);
  if (!(await setAppSwitch(app.clientId, 'expireUserTokens', readExpireUserTokens(request.form))))
    throw pageNotFound();
  return seeOther(paths.developerApp(app.clientId), 'token-expiration-saved');
});
