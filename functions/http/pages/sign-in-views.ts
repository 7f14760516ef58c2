import { safeReturnTo } from '#domain/return-to';
import type { WebReply, WebRequest } from '#http/middleware/web-stack';
import { type Html, html } from '#shared/html';
import { csrfField } from '#shared/page-layout';

/** Where signed-in users land when nothing else was asked for: their repositories (issue 37). */
export const HOME = '/';

export const returnTo = (request: WebRequest): string =>
  safeReturnTo(request.method === 'POST' ? request.form.get('return_to') : request.query.return_to, HOME);

/** An OAuth client may forbid sign-up (`allow_signup=false` on its authorize URL). */
export function signupAllowed(target: string): boolean {
  const url = new URL(target, 'http://self.invalid');
  return !(url.pathname === '/login/oauth/authorize' && url.searchParams.get('allow_signup') === 'false');
}

const errorBox = (message: string | undefined): Html | undefined =>
  message ? html`<div class="error" role="alert">${message}</div>` : undefined;

export function loginPage(
  request: WebRequest,
  options: { error?: string; status?: number; login?: string } = {},
): WebReply {
  const target = returnTo(request);
  const signup = signupAllowed(target)
    ? html`<p>New here? <a href="/signup?return_to=${encodeURIComponent(target)}">Create an account</a></p>`
    : undefined;
  return {
    status: options.status ?? 200,
    title: 'Sign in',
    body: html`<h1>Sign in</h1>
${errorBox(options.error)}
<form method="post" action="/login" class="panel">
  ${csrfField(request.csrf)}
  <input type="hidden" name="return_to" value="${target}">
  <label for="login">Username</label>
  <input type="text" id="login" name="login" autocomplete="username" autocapitalize="none" required value="${options.login ?? ''}">
  <label for="password">Password</label>
  <input type="password" id="password" name="password" autocomplete="current-password" required>
  <div class="actions"><button type="submit" class="primary">Sign in</button></div>
</form>
${signup}`,
  };
}

export function twoFactorPage(
  request: WebRequest,
  options: { error?: string; status?: number } = {},
): WebReply {
  return {
    status: options.status ?? 200,
    title: 'Two-factor authentication',
    body: html`<h1>Two-factor authentication</h1>
${errorBox(options.error)}
<form method="post" action="/login/two-factor" class="panel">
  ${csrfField(request.csrf)}
  <input type="hidden" name="return_to" value="${returnTo(request)}">
  <label for="otp">Authentication code</label>
  <p class="muted" id="otp-help">Open your authenticator app and enter the 6-digit code for this account.</p>
  <input type="text" id="otp" name="otp" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required aria-describedby="otp-help">
  <div class="actions"><button type="submit" class="primary">Verify</button></div>
</form>`,
  };
}

export function signupPage(
  request: WebRequest,
  options: { error?: string; status?: number; login?: string; email?: string; publicEmail?: boolean } = {},
): WebReply {
  const target = returnTo(request);
  return {
    status: options.status ?? 200,
    title: 'Create your account',
    body: html`<h1>Create your account</h1>
${errorBox(options.error)}
<form method="post" action="/signup" class="panel">
  ${csrfField(request.csrf)}
  <input type="hidden" name="return_to" value="${target}">
  <label for="login">Username</label>
  <p class="muted" id="login-help">Letters, digits and single hyphens; at most 39 characters.</p>
  <input type="text" id="login" name="login" autocomplete="username" autocapitalize="none" required maxlength="39" value="${options.login ?? ''}" aria-describedby="login-help">
  <label for="email">Email</label>
  <input type="email" id="email" name="email" autocomplete="email" required value="${options.email ?? ''}">
  <label for="public_email"><input type="checkbox" id="public_email" name="public_email" value="1"${options.publicEmail ? html` checked` : ''}> Show my email on my public profile</label>
  <label for="password">Password</label>
  <p class="muted" id="password-help">At least 15 characters, or at least 8 with a number and a lower-case letter.</p>
  <input type="password" id="password" name="password" autocomplete="new-password" required aria-describedby="password-help">
  <div class="actions"><button type="submit" class="primary">Create account</button></div>
</form>
<p>Already have an account? <a href="/login?return_to=${encodeURIComponent(target)}">Sign in</a></p>`,
  };
}
