import type { AppTokenSummary, OAuthApp, OwnedApp } from '#domain/apps';
import type { WebReply, WebRequest } from '#http/middleware/web-stack';
import type { FieldError } from '#shared/errors';
import { html } from '#shared/html';
import { csrfField } from '#shared/page-layout';
import type { AppInput } from './app-form.ts';
import { APP_NAME_MAX, APP_URL_MAX } from './format.ts';
import {
  actionButton,
  dateText,
  errorBox,
  externalLink,
  LIST_LIMIT,
  lastUsed,
  noticeBox,
  paths,
  scopeNames,
  secretPanel,
} from './settings-page.ts';

const LIST_LIMIT_NOTE = `Only the first ${LIST_LIMIT} are shown.`;

const invalidAttribute = (errors: readonly FieldError[] | undefined, field: string) =>
  errors?.some((error) => error.field === field) ? html` aria-invalid="true"` : '';

/** GET (and refused POST) /settings/developers: the user's OAuth applications and the register form. */
export function developersPage(
  request: WebRequest,
  list: { readonly apps: readonly OwnedApp[]; readonly more: boolean },
  options: {
    readonly status?: number;
    readonly errors?: readonly FieldError[];
    readonly input?: AppInput;
  } = {},
): WebReply {
  const input = options.input ?? { name: '', url: '', callbackUrl: '', expireUserTokens: false };
  const apps = [...list.apps].sort(
    (a, b) => a.name.localeCompare(b.name) || a.clientId.localeCompare(b.clientId),
  );
  return {
    status: options.status ?? 200,
    title: 'OAuth applications',
    body: html`<h1>OAuth applications</h1>
${noticeBox(request)}
<p class="muted">Applications you have registered to use the OAuth web flow.</p>
${
  apps.length === 0
    ? html`<p class="panel">You have not registered any applications.</p>`
    : html`<table>
<caption class="muted">Your applications${list.more ? html`. ${LIST_LIMIT_NOTE}` : ''}</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Client ID</th><th scope="col">Status</th><th scope="col">Registered</th></tr></thead>
<tbody>${apps.map(
        (app) => html`<tr>
  <td><a href="${paths.developerApp(app.clientId)}">${app.name}</a></td>
  <td><code>${app.clientId}</code></td>
  <td>${app.suspended ? 'Suspended' : 'Active'}</td>
  <td>${dateText(app.createdAt)}</td>
</tr>`,
      )}</tbody>
</table>`
}
<h2 id="register">Register a new application</h2>
${errorBox(options.errors)}
<form method="post" action="${paths.developers}" class="panel" aria-labelledby="register">
  ${csrfField(request.csrf)}
  <label for="name">Application name</label>
  <p class="muted" id="name-help">Users see this name when the application asks for access.</p>
  <input type="text" id="name" name="name" required maxlength="${APP_NAME_MAX}" value="${input.name}" aria-describedby="name-help"${invalidAttribute(options.errors, 'name')}>
  <label for="url">Homepage URL</label>
  <p class="muted" id="url-help">The full URL of the application's homepage.</p>
  <input type="url" id="url" name="url" required maxlength="${APP_URL_MAX}" value="${input.url}" aria-describedby="url-help"${invalidAttribute(options.errors, 'url')}>
  <label for="callback_url">Authorization callback URL</label>
  <p class="muted" id="callback-help">Where users are sent back after authorizing; a redirect_uri must be on its host and port, and under its path.</p>
  <input type="url" id="callback_url" name="callback_url" required maxlength="${APP_URL_MAX}" value="${input.callbackUrl}" aria-describedby="callback-help"${invalidAttribute(options.errors, 'callback_url')}>
  ${expireUserTokensField(input.expireUserTokens)}
  <div class="actions"><button type="submit" class="primary">Register application</button></div>
</form>`,
  };
}

/** The "Expire user authorization tokens" checkbox, on the register form and the application's page. */
const expireUserTokensField = (checked: boolean) =>
  html`<label for="expire_user_tokens"><input type="checkbox" id="expire_user_tokens" name="expire_user_tokens" value="on" aria-describedby="expire-help"${checked ? html` checked` : ''}> Expire user authorization tokens</label>
  <p class="muted" id="expire-help">Tokens issued to users from now on expire after 8 hours and come with a refresh token (valid for 6 months) that buys a new token. Tokens already issued keep their terms.</p>`;

export interface DeveloperAppOptions {
  /** A secret just made: at registration (with the client ID) or by rotation. Shown this once. */
  readonly fresh?: { readonly clientSecret: string; readonly registered: boolean };
}

/** GET /settings/developers/:client_id (owner only): the application, its secret, its users' tokens. */
export function developerAppPage(
  request: WebRequest,
  app: OAuthApp,
  list: { readonly tokens: readonly AppTokenSummary[]; readonly more: boolean },
  now: number,
  options: DeveloperAppOptions = {},
): WebReply {
  const fresh = options.fresh;
  return {
    title: `${app.name} · OAuth application`,
    body: html`<p><a href="${paths.developers}">OAuth applications</a></p>
<h1>${app.name}</h1>
${noticeBox(request)}
${
  fresh
    ? secretPanel(
        fresh.registered ? 'Application registered' : 'New client secret',
        [
          ...(fresh.registered ? [{ label: 'Client ID', value: app.clientId, secret: false }] : []),
          { label: 'Client secret', value: fresh.clientSecret, secret: true },
        ],
        fresh.registered
          ? 'Make sure to copy the client secret now: you won’t be able to see it again.'
          : 'Make sure to copy the new client secret now: you won’t be able to see it again. The previous secret no longer works.',
      )
    : undefined
}
<dl class="panel">
  <dt>Client ID</dt><dd><code>${app.clientId}</code></dd>
  <dt>Homepage URL</dt><dd>${externalLink(app.url)}</dd>
  <dt>Authorization callback URL</dt><dd><code>${app.callbackUrl}</code></dd>
  <dt>Status</dt><dd>${app.suspended ? 'Suspended: users cannot authorize it and its credentials are refused.' : 'Active'}</dd>
  <dt>Registered on</dt><dd>${dateText(app.createdAt)}</dd>
</dl>
<h2 id="token-expiration">User authorization tokens</h2>
<form method="post" action="${paths.developerAppTokenExpiration(app.clientId)}" class="panel" aria-labelledby="token-expiration">
  ${csrfField(request.csrf)}
  ${expireUserTokensField(app.expireUserTokens)}
  <div class="actions"><button type="submit">Save</button></div>
</form>
<h2>Client secret</h2>
<p>Only a hash of the client secret is kept, so it cannot be shown again. Generating a new one makes the current secret stop working at once.</p>
<div class="actions">${actionButton(request, {
      action: paths.developerAppSecret(app.clientId),
      text: 'Generate a new client secret',
      label: `Generate a new client secret for ${app.name}`,
    })}</div>
<h2>Device Flow</h2>
<form method="post" action="${paths.developerAppDeviceFlow(app.clientId)}" class="panel">
  ${csrfField(request.csrf)}
  <input type="checkbox" id="device_flow" name="device_flow" value="on"${app.deviceFlowEnabled ? html` checked` : ''} aria-describedby="device-flow-help"> <label for="device_flow">Enable Device Flow</label>
  <p class="muted" id="device-flow-help">Allow this application to authorize users through the device flow (RFC 8628): a device without a browser shows a code that the user enters at /login/device.</p>
  <div class="actions"><button type="submit">Save</button></div>
</form>
<h2>Users’ tokens</h2>
${
  list.tokens.length === 0
    ? html`<p class="panel">No user has authorized this application yet.</p>`
    : html`<table>
<caption class="muted">Tokens this application holds${list.more ? html`. ${LIST_LIMIT_NOTE}` : ''}</caption>
<thead><tr><th scope="col">User</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Actions</th></tr></thead>
<tbody>${list.tokens.map(
        (token) => html`<tr>
  <td>${token.login}</td>
  <td>${scopeNames(token.scopes)}</td>
  <td>${dateText(token.createdAt)}</td>
  <td>${lastUsed(token.lastUsedAt, now)}</td>
  <td>${actionButton(request, {
    action: paths.developerTokenRevoke(app.clientId, token.id),
    text: 'Revoke',
    label: `Revoke token ${token.id} of ${token.login}`,
    danger: true,
    fields: { login: token.login },
  })}</td>
</tr>`,
      )}</tbody>
</table>`
}`,
  };
}
