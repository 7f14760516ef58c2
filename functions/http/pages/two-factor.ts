import { sessionCookie, webHandler } from '#http/middleware/web-stack';
import { replaceSession } from '#services/sessions';
import { completeTwoFactor } from '#services/sign-in';
import { returnTo, twoFactorPage } from './sign-in-views.ts';

/** POST /login/two-factor: a valid, unspent code turns the pending session into a real one. */
export const handler = webHandler(async (request) => {
  if (!request.pending) return { location: '/login', status: 303 };
  const result = await completeTwoFactor(request.pending.login, request.form.get('otp') ?? '');
  if (result.kind === 'locked-out') {
    return twoFactorPage(request, {
      status: 403,
      error: 'Maximum number of login attempts exceeded. Please try again later.',
    });
  }
  if (result.kind !== 'ok')
    return twoFactorPage(request, {
      status: 401,
      error: 'That code is not valid. Try the current code from your app.',
    });
  const cookie = await replaceSession(request.pending, result.user.login, false);
  return { location: returnTo(request), status: 303, cookies: [sessionCookie(cookie, request.secure)] };
});
