import { SCOPES, type Scope } from '#domain/scopes';
import type { WebReply, WebRequest } from '#http/middleware/web-stack';
import type { DeviceEntry } from '#services/device-flow';
import { type Html, html } from '#shared/html';
import { csrfField } from '#shared/page-layout';
import { pathTo } from '#shared/routes';

/** The device page and its two form targets, from the route table. */
export const devicePaths = {
  page: pathTo('oauth/device'),
  verify: pathTo('oauth/device-verify'),
  decision: pathTo('oauth/device-decision'),
} as const;

/** Signed-out visitors sign in first (two-factor included) and come back to the code form. */
export const signInFirst = (request: WebRequest): WebReply => ({
  location: `/login?return_to=${encodeURIComponent(devicePaths.page)}`,
  status: request.method === 'GET' ? 302 : 303,
});

const timeOf = (epochSeconds: number): string => new Date(epochSeconds * 1000).toISOString().slice(11, 16);

/** What to say when a typed code led nowhere. */
export function entryProblem(entry: Exclude<DeviceEntry, { kind: 'found' }>): {
  readonly status: number;
  readonly message: string;
} {
  switch (entry.kind) {
    case 'malformed':
      return { status: 400, message: 'Enter the 8-character code your device shows, like WDJB-MJHT.' };
    case 'wrong':
      return {
        status: 400,
        message: `That code is not valid, or it has expired or been used. ${entry.remaining} ${entry.remaining === 1 ? 'try' : 'tries'} left before code entry is locked for a while.`,
      };
    case 'locked':
      return {
        status: 429,
        message: `Too many wrong codes. For your security, code entry is locked until ${timeOf(entry.until)} UTC. Try again then with the code your device shows.`,
      };
  }
}

/** GET /login/device: the code form (a code in `?user_code=` is filled in, never submitted). */
export function entryPage(
  request: WebRequest,
  options: { readonly status?: number; readonly error?: string; readonly code?: string } = {},
): WebReply {
  return {
    status: options.status ?? 200,
    title: 'Device activation',
    body: html`<h1>Device activation</h1>
${options.error ? html`<div class="error" role="alert">${options.error}</div>` : undefined}
<form method="post" action="${devicePaths.verify}" class="panel">
  ${csrfField(request.csrf)}
  <label for="user_code">Enter the code displayed on your device</label>
  <input id="user_code" name="user_code" value="${options.code ?? ''}" autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="16" placeholder="XXXX-XXXX" required aria-describedby="user-code-help">
  <p class="muted" id="user-code-help">Signed in as <strong>${request.user?.login}</strong>. Only enter a code you got from a device or program you are setting up yourself.</p>
  <div class="actions"><button type="submit" class="primary">Continue</button></div>
</form>`,
  };
}

function scopeList(scopes: readonly Scope[]): Html {
  if (scopes.length === 0)
    return html`<p>No extra permissions: the application may read only what is public (your public profile and public repositories).</p>`;
  return html`<ul class="scopes">${scopes.map(
    (scope) => html`<li><code>${scope}</code> <span class="muted">${SCOPES[scope]}</span></li>`,
  )}</ul>`;
}

/** The confirmation page: which application, for what, on whose account; Authorize or Cancel. */
export function confirmPage(request: WebRequest, entry: Extract<DeviceEntry, { kind: 'found' }>): WebReply {
  const { app } = entry;
  return {
    title: `Authorize ${app.name}`,
    body: html`<h1>Authorize ${app.name}</h1>
<section class="panel" aria-labelledby="app-heading">
  <h2 id="app-heading">${app.name} by ${app.ownerLogin}</h2>
  <p>A device using the code <strong><code>${entry.userCode}</code></strong> wants to access your account <strong>${request.user?.login}</strong>.</p>
  <h3>Permissions requested</h3>
  ${scopeList(entry.scopes)}
</section>
<form method="post" action="${devicePaths.decision}" class="panel">
  ${csrfField(request.csrf)}
  <input type="hidden" name="user_code" value="${entry.userCode}">
  <div class="actions">
    <button type="submit" name="decision" value="authorize" class="primary">Authorize ${app.name}</button>
    <button type="submit" name="decision" value="cancel">Cancel</button>
  </div>
  <p class="muted">Authorize only if you started this on a device you own. The device gets a token for your account.</p>
</form>`,
  };
}

/** After the decision. */
export function donePage(appName: string, approved: boolean): WebReply {
  return approved
    ? {
        title: 'Device connected',
        body: html`<h1>Congratulations, you're all set!</h1>
<p class="notice" role="status">Your device is now connected to ${appName}. You can close this window and go back to your device.</p>`,
      }
    : {
        title: 'Authorization cancelled',
        body: html`<h1>Authorization cancelled</h1>
<p class="notice" role="status">${appName} was not given access to your account. You can close this window.</p>`,
      };
}

/** The code stopped being pending between the confirmation page and the decision. */
export const goneMessage = 'This code has already been used or has expired. Start again on your device.';
