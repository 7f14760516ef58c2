import { batchDashboard } from '#services/import-batch-dashboard';
import { batchPageHandler } from './batch-page.ts';
import { dashboardPage } from './dashboard-view.ts';

/** GET /imports/batches/:batch_id: every import of the batch, problems first, and the actions on all. */
export const handler = batchPageHandler(async (request, caller, batchId) =>
  dashboardPage(request, await batchDashboard(caller, batchId)),
);
