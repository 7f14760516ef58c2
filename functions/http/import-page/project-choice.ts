import { importProgress, updateImport } from '#services/imports';
import { changeThenBack, formRefused, importPageHandler } from './import-page.ts';

/**
 * POST /:owner/:repo/import/project: the API's PATCH with one element of `project_choices`. The
 * form sends the choice's position; the service checks it is still one of the import's choices.
 */
export const handler = importPageHandler((request, caller, repo) =>
  changeThenBack(request, caller, repo, async () => {
    const record = await importProgress(caller, repo.owner, repo.repo);
    const index = /^\d{1,4}$/.test(request.form.get('choice') ?? '')
      ? Number(request.form.get('choice'))
      : -1;
    const choice = record.projectChoices?.[index];
    if (!choice) throw formRefused('Choose one of the projects found at the URL.');
    await updateImport(caller, repo.owner, repo.repo, {
      vcs: choice.vcs,
      humanName: choice.humanName,
      tfvcProject: choice.tfvcProject,
    });
  }),
);
