import { applyAuthorsFileToBatch } from '#services/import-batch-authors';
import { batchDashboard } from '#services/import-batch-dashboard';
import { HttpError } from '#shared/errors';
import { authorsFileOfForm } from '../import-page/authors-view.ts';
import { batchAuthorsAnswer } from './authors-view.ts';
import { batchPageHandler } from './batch-page.ts';
import { dashboardPage } from './dashboard-view.ts';

/**
 * POST /imports/batches/:batch_id/authors: the API's PUT …/import-batches/:id/authors with the file
 * chosen or pasted in the dashboard's form. The answer is a page of each import's outcome; a refused file
 * shows the dashboard again with one message per bad line (nothing changed).
 */
export const handler = batchPageHandler(async (request, caller, batchId) => {
  try {
    return batchAuthorsAnswer(await applyAuthorsFileToBatch(caller, batchId, authorsFileOfForm(request)));
  } catch (error) {
    if (!(error instanceof HttpError) || error.status !== 422) throw error;
    const details = (error.details.errors ?? []).map((problem) => problem.message ?? problem.code);
    return dashboardPage(request, await batchDashboard(caller, batchId), {
      status: 422,
      problems: { message: 'The authors file was refused; no import changed.', failed: [], details },
    });
  }
});
