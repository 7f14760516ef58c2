import { updateImport } from '#services/imports';
import { changeThenBack, formRefused, importPageHandler } from './import-page.ts';

/** POST /:owner/:repo/import/credentials: the API's PATCH with `vcs_username` and `vcs_password`. */
export const handler = importPageHandler((request, caller, repo) =>
  changeThenBack(request, caller, repo, async () => {
    const username = request.form.get('vcs_username') ?? '';
    const password = request.form.get('vcs_password') ?? '';
    if (username === '' || password === '') throw formRefused('Enter both a username and a password.');
    await updateImport(caller, repo.owner, repo.repo, { vcsUsername: username, vcsPassword: password });
  }),
);
