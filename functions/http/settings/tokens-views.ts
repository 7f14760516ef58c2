import type { Authorization } from '#domain/authorizations';
import type { RevocationNotice } from '#domain/credential-reports';
import { SCOPES, type Scope } from '#domain/scopes';
import type { WebReply, WebRequest } from '#http/middleware/web-stack';
import type { FieldError } from '#shared/errors';
import { html } from '#shared/html';
import { csrfField } from '#shared/page-layout';
import { NOTE_MAX } from './format.ts';
import {
  actionButton,
  dateText,
  errorBox,
  lastUsed,
  noticeBox,
  paths,
  scopeNames,
  secretPanel,
} from './settings-page.ts';

/** What the user typed into the create form, shown again when it is refused. */
export interface TokenInput {
  readonly note: string;
  readonly scopes: readonly string[];
}

export interface TokensPageOptions {
  readonly status?: number;
  readonly errors?: readonly FieldError[];
  readonly input?: TokenInput;
  /** The user's tokens revoked after a credential report, newest first. */
  readonly revoked?: readonly RevocationNotice[];
  /** A token just created or regenerated: shown this once. */
  readonly fresh?: {
    readonly authorization: Authorization;
    readonly token: string;
    readonly regenerated: boolean;
  };
}

/** The checkbox id of a scope: `user:email` → `scope-user-email` (unique, no scope has a hyphen). */
export const scopeFieldId = (scope: string): string => `scope-${scope.replace(/[^a-z_]/g, '-')}`;

const noteOf = (authorization: Authorization): string => authorization.note ?? '(no note)';

const revokedWhat = (notice: RevocationNotice) => {
  switch (notice.kind) {
    case 'personal':
      return html`Personal access token “${notice.note ?? '(no note)'}”`;
    case 'oauth':
      return html`Token of the OAuth application <code>${notice.clientId}</code>`;
    case 'refresh':
      return html`Refresh token of the OAuth application <code>${notice.clientId}</code> (its access token went with it)`;
  }
};

/** Tokens revoked because someone reported them publicly exposed: the owner is told here. */
function revokedSection(revoked: readonly RevocationNotice[]) {
  if (revoked.length === 0) return undefined;
  const items = revoked.map(
    (notice) =>
      html`<li>${revokedWhat(notice)}, ending <code>…${notice.tokenLastEight}</code>, revoked ${dateText(notice.revokedAt)}</li>`,
  );
  return html`<section class="panel" role="alert" aria-labelledby="revoked-tokens">
<h2 id="revoked-tokens">Revoked because they were reported exposed</h2>
<p>Someone reported these tokens through the credential revocation API, so they no longer work. Check where they were stored or shared, and make new ones where you still need them.</p>
<ul>${items}</ul>
</section>`;
}

/** GET (and the answers of POST) /settings/tokens: personal access tokens and the create form. */
export function tokensPage(
  request: WebRequest,
  tokens: readonly Authorization[],
  now: number,
  options: TokensPageOptions = {},
): WebReply {
  const fresh = options.fresh;
  const input = options.input ?? { note: '', scopes: [] };
  const invalid = (options.errors ?? []).some((error) => error.field === 'note');
  const rows = tokens.map(
    (token) => html`<tr>
  <td>${noteOf(token)}</td>
  <td>${scopeNames(token.scopes)}</td>
  <td>${dateText(token.createdAt)}</td>
  <td>${lastUsed(token.lastUsedAt, now)}</td>
  <td><code>…${token.tokenLastEight}</code></td>
  <td><div class="actions">${actionButton(request, {
    action: paths.tokenRegenerate(token.id),
    text: 'Regenerate',
    label: `Regenerate token ${noteOf(token)}`,
  })}${actionButton(request, {
    action: paths.tokenDelete(token.id),
    text: 'Delete',
    label: `Delete token ${noteOf(token)}`,
    danger: true,
  })}</div></td>
</tr>`,
  );
  const checkboxes = (Object.keys(SCOPES) as Scope[]).map(
    (
      scope,
    ) => html`<li><label for="${scopeFieldId(scope)}"><input type="checkbox" id="${scopeFieldId(scope)}" name="scopes" value="${scope}" aria-describedby="${scopeFieldId(scope)}-help"${input.scopes.includes(scope) ? html` checked` : ''}> <code>${scope}</code></label>
  <span class="muted" id="${scopeFieldId(scope)}-help">${SCOPES[scope]}</span></li>`,
  );
  return {
    status: options.status ?? 200,
    title: 'Personal access tokens',
    body: html`<h1>Personal access tokens</h1>
${noticeBox(request)}
${revokedSection(options.revoked ?? [])}
${
  fresh
    ? secretPanel(
        fresh.regenerated ? 'Your regenerated token' : 'Your new personal access token',
        [{ label: `Token “${noteOf(fresh.authorization)}”`, value: fresh.token, secret: true }],
        fresh.regenerated
          ? 'Make sure to copy your new token now: you won’t be able to see it again. The old token no longer works.'
          : 'Make sure to copy your personal access token now: you won’t be able to see it again.',
      )
    : undefined
}
<p class="muted">Tokens you have made to use the API as yourself, like a password limited by scopes.</p>
${
  tokens.length === 0
    ? html`<p class="panel">You have no personal access tokens.</p>`
    : html`<table>
<caption class="muted">${tokens.length} personal access ${tokens.length === 1 ? 'token' : 'tokens'}</caption>
<thead><tr><th scope="col">Note</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Token ends with</th><th scope="col">Actions</th></tr></thead>
<tbody>${rows}</tbody>
</table>`
}
<h2 id="new-token">Generate a new token</h2>
${errorBox(options.errors)}
<form method="post" action="${paths.tokens}" class="panel" aria-labelledby="new-token">
  ${csrfField(request.csrf)}
  <label for="note">Note</label>
  <p class="muted" id="note-help">What is this token for? Each of your tokens needs a different note.</p>
  <input type="text" id="note" name="note" required maxlength="${NOTE_MAX}" value="${input.note}" aria-describedby="note-help"${invalid ? html` aria-invalid="true"` : ''}>
  <fieldset>
    <legend>Scopes</legend>
    <p class="muted">Scopes limit what the token can do. With none selected it can only read public information.</p>
    <ul class="scopes">${checkboxes}</ul>
  </fieldset>
  <div class="actions"><button type="submit" class="primary">Generate token</button></div>
</form>`,
  };
}
