import { cutOverImport, importSync } from '#services/import-sync';
import { cutOverConfirmation } from './following-view.ts';
import { changeThenBack, importPageHandler } from './import-page.ts';

/**
 * POST /:owner/:repo/import/cut-over: the page's Cut over button. Without `confirm=cut-over` it
 * answers the confirmation (what cut-over means, and the form that confirms it) while the
 * repository follows its origin; with it, the API's DELETE …/import/sync.
 */
export const handler = importPageHandler(async (request, caller, repo) => {
  if (request.form.get('confirm') !== 'cut-over') {
    // The owner's check (404 for others) comes first; a repository that does not follow gets
    // the service's own answer on the page instead of a question it cannot act on.
    const { sync } = await importSync(caller, repo.owner, repo.repo);
    if (sync.state === 'following') return cutOverConfirmation(request, repo);
  }
  return changeThenBack(request, caller, repo, () => cutOverImport(caller, repo.owner, repo.repo), {
    notice: 'cut-over',
  });
});
