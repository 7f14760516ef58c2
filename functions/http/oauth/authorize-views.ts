import { AUTHORIZE_PARAMETERS, type AuthorizeParams, readAuthorizeParams } from '#domain/authorize-request';
import { SCOPES, type Scope } from '#domain/scopes';
import type { WebReply, WebRequest } from '#http/middleware/web-stack';
import type { AuthorizeRequest } from '#services/oauth-flow';
import { type Html, html } from '#shared/html';
import { csrfField } from '#shared/page-layout';

/** The page path; the login page comes back here with the same parameters. */
export const AUTHORIZE_PATH = '/login/oauth/authorize';

/** The authorize URL for these parameters (a `return_to` for the login page). */
export function authorizePath(params: AuthorizeParams): string {
  const query = new URLSearchParams();
  for (const name of AUTHORIZE_PARAMETERS) {
    const value = params[name];
    if (value !== undefined) query.append(name, value);
  }
  return `${AUTHORIZE_PATH}?${query}`;
}

/** The GET request's parameters (API Gateway's multi-value map shows repeats). */
export const queryParams = (request: WebRequest) =>
  readAuthorizeParams((name) => {
    const many = request.event.multiValueQueryStringParameters?.[name];
    if (many) return many;
    const one = request.query[name];
    return one === undefined ? [] : [one];
  });

/** The consent form's parameters (its hidden fields). */
export const formParams = (request: WebRequest) => readAuthorizeParams((name) => request.form.getAll(name));

export function errorPage(status: number, message: string): WebReply {
  return {
    status,
    title: 'Authorization failed',
    body: html`<h1>This authorization request is not valid</h1>
<div class="error" role="alert">${message}</div>
<p>Go back to the application you came from and try again. If this keeps happening, tell the application's developer.</p>`,
  };
}

const originOf = (url: string): string => new URL(url).origin;

/** The application's homepage as a link when it is an http(s) URL, else as text. */
function homepage(url: string): Html {
  let safe = false;
  try {
    const parsed = new URL(url);
    safe = parsed.protocol === 'https:' || parsed.protocol === 'http:';
  } catch {
    safe = false;
  }
  return safe ? html`<a href="${url}" rel="noopener noreferrer">${url}</a>` : html`${url}`;
}

/**
 * Who vouches for the client: a registered application's homepage; for a client not registered
 * here, the host its metadata document is served from (its client id), or that it registered itself.
 */
function clientOrigin(app: AuthorizeRequest['app']): Html {
  if (app.clientType === 'metadata-document')
    return html`<p class="warning" role="note">This client is <strong>not registered here</strong>. It is identified by
its metadata document at <strong>${new URL(app.clientId).host}</strong> (<code>${app.clientId}</code>). Authorize it only if
you trust <strong>${new URL(app.clientId).host}</strong>.</p>`;
  if (app.clientType === 'dynamic')
    return html`<p class="warning" role="note">This client is <strong>not registered here</strong> by a person: it
registered itself, and its name is its own claim. Authorize it only if you started this from an application you trust;
it will return to <strong>${originOf(app.callbackUrl)}</strong>.</p>`;
  return html`<p>Homepage: ${homepage(app.url)}</p>`;
}

function scopeList(scopes: readonly Scope[]): Html {
  if (scopes.length === 0) {
    return html`<p>No extra permissions: the application may read only what is public (your public profile and
public repositories).</p>`;
  }
  const items = scopes.map(
    (scope, index) => html`<li>
  <label><input type="checkbox" name="granted_scope" value="${scope}" checked aria-describedby="scope-${index}-help"> <code>${scope}</code></label>
  <span class="muted" id="scope-${index}-help">${SCOPES[scope]}</span>
</li>`,
  );
  return html`<fieldset>
  <legend>Permissions requested (untick any you do not want to grant)</legend>
  <ul class="scopes">${items}</ul>
</fieldset>`;
}

/**
 * The consent page: who is asking, for what, on whose account; every parameter travels on in a
 * hidden field and the POST checks them all again. The form's POST redirects to the application,
 * so its origin goes into the CSP's form-action.
 */
export function consentPage(
  request: WebRequest,
  authorize: AuthorizeRequest,
  alreadyGranted: readonly Scope[],
): WebReply {
  const { app } = authorize;
  const hidden = AUTHORIZE_PARAMETERS.map((name) => {
    const value = authorize.params[name];
    return value === undefined ? undefined : html`<input type="hidden" name="${name}" value="${value}">`;
  });
  const previously =
    alreadyGranted.length > 0
      ? html`<p>You already granted it: ${alreadyGranted.map((scope, i) => html`${i > 0 ? ', ' : ''}<code>${scope}</code>`)}.</p>`
      : undefined;
  const resource = authorize.resource
    ? html`<p>The access is for <strong>${authorize.resource}</strong> only (not the REST API).</p>`
    : undefined;
  return {
    title: `Authorize ${app.name}`,
    formActions: [...new Set([originOf(authorize.target), originOf(app.callbackUrl)])],
    body: html`<h1>Authorize ${app.name}</h1>
<section class="panel" aria-labelledby="app-heading">
  <h2 id="app-heading">${app.clientType === 'registered' ? html`${app.name} by ${app.ownerLogin}` : app.name}</h2>
  <p>wants to access your account <strong>${request.user?.login}</strong>.</p>
  ${clientOrigin(app)}
  ${resource}
  ${previously}
</section>
<form method="post" action="${AUTHORIZE_PATH}" class="panel">
  ${csrfField(request.csrf)}
  ${hidden}
  ${scopeList(authorize.scopes)}
  <div class="actions">
    <button type="submit" name="decision" value="authorize" class="primary">Authorize ${app.name}</button>
    <button type="submit" name="decision" value="cancel">Cancel</button>
  </div>
  <p class="muted">Authorizing will redirect to <strong>${originOf(authorize.target)}</strong>.</p>
</form>`,
  };
}
