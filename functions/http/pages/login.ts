import { sessionCookie, webHandler } from '#http/middleware/web-stack';
import { replaceSession } from '#services/sessions';
import { signIn } from '#services/sign-in';
import { loginPage, returnTo } from './sign-in-views.ts';

/**
 * POST /login: checks the password (same lock-out as the API). Two-factor users get a pending
 * session and the code form; everyone else a session and their way back to `return_to`. A session
 * the browser already had (another user's, or a half-done two-factor sign-in) ends on the server:
 * the new cookie replaces it, and the old value must not stay usable.
 */
export const handler = webHandler(async (request) => {
  const login = (request.form.get('login') ?? '').trim();
  const password = request.form.get('password') ?? '';
  const result = await signIn(login, password, undefined);
  const target = returnTo(request);
  const previous = request.session ?? request.pending;
  switch (result.kind) {
    case 'ok': {
      const cookie = await replaceSession(previous, result.user.login, false);
      return { location: target, status: 303, cookies: [sessionCookie(cookie, request.secure)] };
    }
    case 'otp-required': {
      const cookie = await replaceSession(previous, result.user.login, true);
      return {
        location: `/login/two-factor?return_to=${encodeURIComponent(target)}`,
        status: 303,
        cookies: [sessionCookie(cookie, request.secure)],
      };
    }
    case 'locked-out':
      return loginPage(request, {
        status: 403,
        login,
        error: 'Maximum number of login attempts exceeded. Please try again later.',
      });
    default:
      return loginPage(request, { status: 401, login, error: 'Incorrect username or password.' });
  }
});
