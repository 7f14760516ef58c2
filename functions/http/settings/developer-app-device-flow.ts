import { ownedApp, setAppSwitch } from '#services/apps';
import { paths, seeOther, settingsHandler } from './settings-page.ts';

/**
 * POST /settings/developers/:client_id/device-flow: the "Enable Device Flow" checkbox (ticked sends
 * `device_flow=on`, unticked sends nothing), owner only.
 */
export const handler = settingsHandler(paths.developers, async (request, user) => {
  const app = await ownedApp(user.login, request.params.client_id);
  const enabled = request.form.get('device_flow') === 'on';
  await setAppSwitch(app.clientId, 'deviceFlowEnabled', enabled);
  return seeOther(paths.developerApp(app.clientId), enabled ? 'device-flow-enabled' : 'device-flow-disabled');
});
