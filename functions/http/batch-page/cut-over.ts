import { batchDashboard } from '#services/import-batch-dashboard';
import { cutOverImportBatch } from '#services/import-batches';
import { actOnAll, batchPageHandler } from './batch-page.ts';
import { cutOverConfirmation } from './dashboard-view.ts';

/**
 * POST /imports/batches/:batch_id/cut-over: without `confirm=cut-over`, the confirmation (what
 * cut-over means, and the form that confirms it); with it, the API's DELETE …/import-batches/:id/sync.
 */
export const handler = batchPageHandler(async (request, caller, batchId) => {
  if (request.form.get('confirm') !== 'cut-over')
    return cutOverConfirmation(request, await batchDashboard(caller, batchId));
  return actOnAll(request, caller, batchId, 'cut-over', () => cutOverImportBatch(caller, batchId));
});
