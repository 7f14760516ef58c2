import type { NewImportField } from '#domain/new-import';
import type { WebPage, WebRequest } from '#http/middleware/web-stack';
import { type Html, html } from '#shared/html';
import { csrfField } from '#shared/page-layout';
import { pathTo } from '#shared/routes';
import { NAME_SCRIPT_HASH, nameScript } from './name-script.ts';

/** What the form shows again after a refusal: every value but the password. */
export interface FormValues {
  readonly vcsUrl: string;
  readonly vcsUsername: string;
  readonly name: string;
  readonly private: boolean;
}

export const EMPTY_FORM: FormValues = { vcsUrl: '', vcsUsername: '', name: '', private: false };

export interface FormProblems {
  /** Beside their fields. */
  readonly fields: Partial<Record<NewImportField, string>>;
  /** Not about one field (the workflow unavailable, a conflict). */
  readonly general?: string;
}

/** The message beside a field, and the attributes that tie it to its input. */
function fieldNote(id: string, problem: string | undefined, note?: Html): Html {
  if (problem) return html`<p id="${id}-status" class="field-error">${problem}</p>`;
  return html`<p id="${id}-status" class="field-note">${note}</p>`;
}

const invalid = (problem: string | undefined): Html | undefined =>
  problem ? html` aria-invalid="true"` : undefined;

/** GitHub's "Import your project to GitHub" form: old URL, credentials, new name, visibility. */
export function newImportPage(
  request: WebRequest,
  options: { readonly values?: FormValues; readonly problems?: FormProblems; readonly status?: number } = {},
): WebPage {
  const values = options.values ?? EMPTY_FORM;
  const fields = options.problems?.fields ?? {};
  const messages = [
    ...(options.problems?.general ? [options.problems.general] : []),
    ...Object.values(fields),
  ];
  const summary =
    messages.length > 0
      ? html`<div class="error" role="alert" id="form-problems"><p>The import was not started:</p><ul>${messages.map(
          (message) => html`<li>${message}</li>`,
        )}</ul></div>`
      : undefined;
  const owner = request.user?.login ?? '';
  return {
    status: options.status ?? 200,
    title: 'Import a repository',
    scriptHashes: [NAME_SCRIPT_HASH],
    body: html`<h1>Import your project</h1>
<p class="muted">Bring a repository over from another server, with its whole history: Git, Subversion, Mercurial or TFVC. The kind is detected from the URL.</p>
${summary}
<form method="post" action="${pathTo('new-import/create')}" class="panel" novalidate>
  ${csrfField(request.csrf)}
  <h2>Your old repository</h2>
  <label for="vcs_url">Its clone URL</label>
  <input type="text" inputmode="url" id="vcs_url" name="vcs_url" autocomplete="off" autocapitalize="none" spellcheck="false" value="${values.vcsUrl}" aria-describedby="vcs_url-status"${invalid(fields.vcs_url)}>
  ${fieldNote('vcs_url', fields.vcs_url, html`For example <code>https://svn.example.org/repos/project</code> or <code>https://git.example.org/project.git</code>.`)}
  <fieldset>
    <legend>Credentials, if the old server needs them</legend>
    <label for="vcs_username">Username</label>
    <input type="text" id="vcs_username" name="vcs_username" autocomplete="off" autocapitalize="none" spellcheck="false" value="${values.vcsUsername}" aria-describedby="vcs_username-status"${invalid(fields.vcs_username)}>
    ${fieldNote('vcs_username', fields.vcs_username)}
    <label for="vcs_password">Password</label>
    <input type="password" id="vcs_password" name="vcs_password" autocomplete="new-password" aria-describedby="vcs_password-status"${invalid(fields.vcs_password)}>
    ${fieldNote('vcs_password', fields.vcs_password, html`Stored encrypted, used only to read the old repository.`)}
  </fieldset>
  <h2>Your new repository</h2>
  <label for="name">Name <span class="muted">(${owner}/…)</span></label>
  <input type="text" id="name" name="name" maxlength="100" autocomplete="off" autocapitalize="none" spellcheck="false" value="${values.name}" aria-describedby="name-status"${invalid(fields.name)}>
  <p id="name-status" class="${fields.name ? 'field-error' : 'field-note'}" aria-live="polite">${fields.name}</p>
  <fieldset>
    <legend>Visibility</legend>
    <label><input type="radio" name="visibility" value="public"${values.private ? undefined : html` checked`}> <span>Public: anyone can see it</span></label>
    <label><input type="radio" name="visibility" value="private"${values.private ? html` checked` : undefined}> <span>Private: only you can see it</span></label>
  </fieldset>
  <div class="actions"><button type="submit" class="primary">Begin import</button><a href="/">Cancel</a></div>
</form>
${nameScript()}`,
  };
}
