import { isAcceptablePassword } from '#domain/passwords';
import { isValidLogin } from '#domain/users';
import { sessionCookie, webHandler } from '#http/middleware/web-stack';
import { createAccount } from '#services/accounts';
import { replaceSession } from '#services/sessions';
import { HttpError } from '#shared/errors';
import { returnTo, signupAllowed, signupPage } from './sign-in-views.ts';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** POST /signup: creates the account, signs in, and returns to where the user was going. */
export const handler = webHandler(async (request) => {
  const target = returnTo(request);
  if (!signupAllowed(target)) throw new HttpError(403, 'This application does not allow signing up here.');
  const login = (request.form.get('login') ?? '').trim();
  const email = (request.form.get('email') ?? '').trim();
  const password = request.form.get('password') ?? '';
  // Unticked by default: the address stays private unless the user chooses to show it.
  const publicEmail = request.form.get('public_email') === '1';
  const refuse = (error: string) => signupPage(request, { status: 422, error, login, email, publicEmail });
  if (!isValidLogin(login))
    return refuse(
      'Username may only contain letters, digits and single hyphens, and cannot begin or end with a hyphen (at most 39 characters).',
    );
  if (!EMAIL.test(email) || email.length > 254) return refuse('Enter a valid email address.');
  if (!isAcceptablePassword(password))
    return refuse(
      'Password needs at least 15 characters, or at least 8 with a number and a lower-case letter.',
    );
  const user = await createAccount({ login, email, publicEmail, password });
  if (!user) return refuse(`Username ${login} is not available.`);
  // The browser's previous session, if any, ends with the new account's sign-in.
  const cookie = await replaceSession(request.session ?? request.pending, user.login, false);
  return { location: target, status: 303, cookies: [sessionCookie(cookie, request.secure)] };
});
