import { setLfsPreference } from '#services/imports';
import { changeThenBack, formRefused, importPageHandler } from './import-page.ts';

/** POST /:owner/:repo/import/lfs: the API's PATCH …/import/lfs with the chosen `use_lfs`. */
export const handler = importPageHandler((request, caller, repo) =>
  changeThenBack(request, caller, repo, async () => {
    const choice = request.form.get('use_lfs');
    if (choice !== 'opt_in' && choice !== 'opt_out')
      throw formRefused('Choose whether to keep large files with Git LFS or to remove them.');
    await setLfsPreference(caller, repo.owner, repo.repo, choice);
  }),
);
