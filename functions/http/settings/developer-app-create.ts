import { appsOf, registerApp } from '#services/apps';
import { appInputErrors, readAppInput } from './app-form.ts';
import { developerAppPage, developersPage } from './developers-views.ts';
import { LIST_LIMIT, paths, settingsHandler } from './settings-page.ts';

/**
 * POST /settings/developers: registers an application; the answer is its page showing the client
 * secret this once (only its hash is stored). Refusals keep what the user typed.
 */
export const handler = settingsHandler(paths.developers, async (request, user) => {
  const input = readAppInput(request.form);
  const errors = appInputErrors(input);
  if (errors.length > 0)
    return developersPage(request, await appsOf(user.login, LIST_LIMIT), {
      status: 422,
      errors,
      input,
    });
  const { app, clientSecret } = await registerApp({ ownerLogin: user.login, ...input });
  return developerAppPage(request, app, { tokens: [], more: false }, Date.now(), {
    fresh: { clientSecret, registered: true },
  });
});
