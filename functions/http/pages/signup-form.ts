import { webHandler } from '#http/middleware/web-stack';
import { HttpError } from '#shared/errors';
import { returnTo, signupAllowed, signupPage } from './sign-in-views.ts';

/** GET /signup: the sign-up form (refused when the OAuth client asked for no sign-up). */
export const handler = webHandler(async (request) => {
  if (request.user) return { location: returnTo(request) };
  if (!signupAllowed(returnTo(request)))
    throw new HttpError(403, 'This application does not allow signing up here.');
  return signupPage(request);
});
