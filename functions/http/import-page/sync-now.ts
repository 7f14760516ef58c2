import { syncNow } from '#services/import-sync';
import { changeThenBack, importPageHandler } from './import-page.ts';

/** POST /:owner/:repo/import/sync: the API's POST …/import/sync (a sync starts now). */
export const handler = importPageHandler((request, caller, repo) =>
  changeThenBack(request, caller, repo, () => syncNow(caller, repo.owner, repo.repo), {
    notice: 'sync-started',
  }),
);
