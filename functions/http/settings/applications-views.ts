import type { OAuthApp } from '#domain/apps';
import type { Grant } from '#domain/authorizations';
import type { WebReply, WebRequest } from '#http/middleware/web-stack';
import { html } from '#shared/html';
import {
  actionButton,
  dateText,
  externalLink,
  lastUsed,
  noticeBox,
  paths,
  scopeList,
} from './settings-page.ts';

/** A grant with its application (absent only if the application record is gone). */
export interface GrantView {
  readonly grant: Grant;
  readonly app: Pick<OAuthApp, 'clientId' | 'name' | 'url' | 'ownerLogin' | 'clientType'> | undefined;
}

/** GET /settings/connections/applications: the applications the user has authorized. */
export function applicationsPage(request: WebRequest, grants: readonly GrantView[], now: number): WebReply {
  const rows = grants.map(
    ({ grant, app }) => html`<tr>
  <td><a href="${paths.application(grant.clientId)}">${app?.name ?? grant.clientId}</a>${app && app.clientType !== 'registered' ? html` <span class="muted">(not registered here${app.clientType === 'metadata-document' ? html`: ${new URL(app.clientId).host}` : ''})</span>` : ''}</td>
  <td>${scopeList(grant.scopes)}</td>
  <td>${dateText(grant.createdAt)}</td>
  <td>${lastUsed(grant.lastUsedAt, now)}</td>
</tr>`,
  );
  return {
    title: 'Authorized OAuth applications',
    body: html`<h1>Authorized OAuth applications</h1>
${noticeBox(request)}
<p class="muted">Applications you have allowed to use your account. Review one to see what it can do or to revoke its access.</p>
${
  grants.length === 0
    ? html`<p class="panel">You have not authorized any applications.</p>`
    : html`<table>
<caption class="muted">${grants.length} authorized ${grants.length === 1 ? 'application' : 'applications'}</caption>
<thead><tr><th scope="col">Application</th><th scope="col">Access</th><th scope="col">Authorized</th><th scope="col">Last used</th></tr></thead>
<tbody>${rows}</tbody>
</table>`
}`,
  };
}

/**
 * Who the application is: a registered one's owner and homepage; a client not registered here is
 * shown by where it comes from (its metadata document's host and URL, or that it registered itself).
 */
function clientRows(app: Pick<OAuthApp, 'clientId' | 'url' | 'ownerLogin' | 'clientType'>) {
  if (app.clientType === 'metadata-document')
    return html`<dt>Owner</dt><dd>Not registered here: identified by its metadata document at <strong>${new URL(app.clientId).host}</strong></dd>
  <dt>Client ID</dt><dd><code>${app.clientId}</code></dd>`;
  if (app.clientType === 'dynamic')
    return html`<dt>Owner</dt><dd>Not registered here: it registered itself (dynamic client registration)</dd>
  <dt>Client ID</dt><dd><code>${app.clientId}</code></dd>`;
  return html`<dt>Owner</dt><dd>${app.ownerLogin}</dd>
  <dt>Homepage</dt><dd>${externalLink(app.url)}</dd>`;
}

/** GET /settings/connections/applications/:client_id: what one application may do, and its revocation. */
export function applicationPage(
  request: WebRequest,
  grant: Grant,
  app: Pick<OAuthApp, 'clientId' | 'name' | 'url' | 'ownerLogin' | 'clientType'>,
  now: number,
): WebReply {
  return {
    title: `${app.name} · Authorized application`,
    body: html`<p><a href="${paths.applications}">Authorized OAuth applications</a></p>
<h1>${app.name}</h1>
<dl class="panel">
  ${clientRows(app)}
  <dt>Authorized on</dt><dd>${dateText(grant.createdAt)}</dd>
  <dt>Last used</dt><dd>${lastUsed(grant.lastUsedAt, now)}</dd>
</dl>
<h2>Permissions</h2>
${scopeList(grant.scopes)}
<h2>Revoke access</h2>
<p>Revoking deletes every token this application holds for your account and the SSH and deploy keys it created for you. It can ask for access again later.</p>
<div class="actions">${actionButton(request, {
      action: paths.applicationRevoke(app.clientId),
      text: 'Revoke access',
      label: `Revoke access for ${app.name}`,
      danger: true,
    })}</div>`,
  };
}
