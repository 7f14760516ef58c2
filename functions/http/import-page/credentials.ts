import { MAX_VCS_PASSWORD_LENGTH, MAX_VCS_USERNAME_LENGTH } from '#domain/imports';
import { updateImport } from '#services/imports';
import { changeThenBack, formRefused, importPageHandler } from './import-page.ts';

/** POST /:owner/:repo/import/credentials: the API's PATCH with `vcs_username` and `vcs_password`. */
export const handler = importPageHandler((request, caller, repo) =>
  changeThenBack(request, caller, repo, async () => {
    const username = request.form.get('vcs_username') ?? '';
    const password = request.form.get('vcs_password') ?? '';
    if (username === '' || password === '') throw formRefused('Enter both a username and a password.');
    // The API's limits (its request schema), so the page accepts exactly what the API accepts.
    if (username.length > MAX_VCS_USERNAME_LENGTH || password.length > MAX_VCS_PASSWORD_LENGTH)
      throw formRefused(
        `The username may have at most ${MAX_VCS_USERNAME_LENGTH} characters, the password ${MAX_VCS_PASSWORD_LENGTH}.`,
      );
    await updateImport(caller, repo.owner, repo.repo, { vcsUsername: username, vcsPassword: password });
  }),
);
