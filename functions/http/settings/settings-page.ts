import { isAcceptableAppUrl } from '#domain/apps';
import { SCOPES, type Scope } from '#domain/scopes';
import type { User } from '#domain/users';
import { type WebReply, type WebRequest, webHandler } from '#http/middleware/web-stack';
import { type FieldError, HttpError } from '#shared/errors';
import { type Html, html } from '#shared/html';
import { csrfField } from '#shared/page-layout';
import { pathTo } from '#shared/routes';
import { fieldErrorText, formatDate, lastUsedText, noticeText } from './format.ts';

/*
 * What every settings page shares: the signed-in requirement, and the pieces of markup the pages
 * are built from (all through `html`, so every value is escaped).
 */

/**
 * A settings page or action: signed-out visitors are sent to sign in and come back here (a GET
 * page) or to `page` (an action, which has no page of its own to come back to).
 */
export function settingsHandler(
  page: string | undefined,
  run: (request: WebRequest, user: User) => Promise<WebReply>,
) {
  return webHandler(async (request) => {
    if (request.user) return run(request, request.user);
    const get = request.method === 'GET';
    const target = get ? request.event.path : (page ?? request.event.path);
    return { location: `/login?return_to=${encodeURIComponent(target)}`, status: get ? 302 : 303 };
  });
}

/** The answer for anything the signed-in user has no business seeing: it does not exist. */
export const pageNotFound = (): HttpError => new HttpError(404, 'Not Found');

/** Runs a domain call whose 422 (GitHub's validation errors) the form shows instead of an error page. */
export async function orFieldErrors<T>(
  work: Promise<T>,
): Promise<{ readonly ok: T } | { readonly errors: readonly FieldError[] }> {
  try {
    return { ok: await work };
  } catch (error) {
    if (error instanceof HttpError && error.status === 422) return { errors: error.details.errors ?? [] };
    throw error;
  }
}

/** Addresses of the settings pages and actions, from the route table, with path parameters encoded. */
export const paths = {
  applications: pathTo('settings/applications'),
  application: (clientId: string) => pathTo('settings/application', { client_id: clientId }),
  applicationRevoke: (clientId: string) => pathTo('settings/application-revoke', { client_id: clientId }),
  tokens: pathTo('settings/tokens'),
  securityLog: pathTo('settings/security-log'),
  tokenRegenerate: (id: number) => pathTo('settings/token-regenerate', { authorization_id: id }),
  tokenDelete: (id: number) => pathTo('settings/token-delete', { authorization_id: id }),
  developers: pathTo('settings/developers'),
  developerApp: (clientId: string) => pathTo('settings/developer-app', { client_id: clientId }),
  developerAppSecret: (clientId: string) => pathTo('settings/developer-app-secret', { client_id: clientId }),
  developerAppTokenExpiration: (clientId: string) =>
    pathTo('settings/developer-app-token-expiration', { client_id: clientId }),
  developerAppDeviceFlow: (clientId: string) =>
    pathTo('settings/developer-app-device-flow', { client_id: clientId }),
  developerTokenRevoke: (clientId: string, id: number) =>
    pathTo('settings/developer-token-revoke', { client_id: clientId, authorization_id: id }),
} as const;

/** A redirect after an action, to a page that shows the fixed notice `notice`. */
export const seeOther = (path: string, notice: string): WebReply => ({
  location: `${path}?notice=${encodeURIComponent(notice)}`,
  status: 303,
});

export const noticeBox = (request: WebRequest): Html | undefined => {
  const text = noticeText(request.query.notice);
  return text ? html`<div class="notice" role="status">${text}</div>` : undefined;
};

export const errorBox = (errors: readonly FieldError[] | undefined): Html | undefined =>
  errors && errors.length > 0
    ? html`<div class="error" role="alert"><p>Please fix the following:</p><ul>${errors.map(
        (error) => html`<li>${fieldErrorText(error)}</li>`,
      )}</ul></div>`
    : undefined;

/** Scopes, each with what it grants in plain words; no scope at all is read-only public access. */
export const scopeList = (scopes: readonly Scope[]): Html =>
  scopes.length === 0
    ? html`<p class="muted">No scopes: read-only access to public information.</p>`
    : html`<ul class="scopes">${scopes.map(
        (scope) => html`<li><code>${scope}</code>: ${SCOPES[scope] ?? ''}</li>`,
      )}</ul>`;

/** Scope names, compactly (tables). */
export const scopeNames = (scopes: readonly Scope[]): Html =>
  scopes.length === 0
    ? html`<span class="muted">No scopes</span>`
    : html`${scopes.map((scope, index) => html`${index > 0 ? ', ' : ''}<code>${scope}</code>`)}`;

/** Most rows a list of applications or of an application's tokens shows. */
export const LIST_LIMIT = 100;

export const dateText = (iso: string): Html => html`<time datetime="${iso}">${formatDate(iso)}</time>`;

export const lastUsed = (lastUsedAt: string | null, now: number): Html =>
  lastUsedAt === null
    ? html`${lastUsedText(null, now)}`
    : html`<time datetime="${lastUsedAt}">${lastUsedText(lastUsedAt, now)}</time>`;

/** A link to an application's URL when it is a plain http(s) URL, else the text alone. */
export const externalLink = (url: string, text: string = url): Html =>
  isAcceptableAppUrl(url) ? html`<a href="${url}" rel="noopener noreferrer">${text}</a>` : html`${text}`;

/** A one-button form that POSTs to `action`; `label` names the object when the text is generic. */
export function actionButton(
  request: WebRequest,
  options: {
    readonly action: string;
    readonly text: string;
    readonly label?: string;
    readonly danger?: boolean;
    readonly fields?: Readonly<Record<string, string>>;
  },
): Html {
  const hidden = Object.entries(options.fields ?? {}).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
  );
  return html`<form method="post" action="${options.action}">${csrfField(request.csrf)}${hidden}<button type="submit"${options.danger ? html` class="danger"` : ''}${options.label ? html` aria-label="${options.label}"` : ''}>${options.text}</button></form>`;
}

/** A secret shown once, right after it was made, with the warning that it will not be shown again. */
export function secretPanel(
  heading: string,
  items: readonly { readonly label: string; readonly value: string; readonly secret: boolean }[],
  warning: string,
): Html {
  return html`<section class="panel" aria-labelledby="secret-heading">
  <h2 id="secret-heading">${heading}</h2>
  <p class="notice" role="status">${warning}</p>
  <dl>${items.map(
    (item) =>
      html`<dt>${item.label}</dt><dd${item.secret ? html` class="secret"` : ''}><code>${item.value}</code></dd>`,
  )}</dl>
</section>`;
}
