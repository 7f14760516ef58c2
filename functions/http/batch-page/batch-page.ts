import type { WebPage, WebReply, WebRequest } from '#http/middleware/web-stack';
import { webHandler } from '#http/middleware/web-stack';
import type { Caller } from '#services/authenticate';
import { batchDashboard } from '#services/import-batch-dashboard';
import type { BatchActionResult, EntryOutcome } from '#services/import-batches';
import { HttpError } from '#shared/errors';
import { html } from '#shared/html';
import { sessionCaller } from '../import-page/import-page.ts';
import { type BatchNoticeKey, dashboardPage, type OutcomeProblems } from './dashboard-view.ts';
import { batchPaths } from './paths.ts';

/*
 * What the batch pages and their form targets share: the signed-in requirement (a page session is
 * the user with every scope, as on the progress page), the batch id, the one 404 page for a batch
 * that is not the caller's or does not exist, and how an action on all imports answers.
 */

/** The answer when there is no batch the signed-in user may see (the same for every reason). */
export function noBatchPage(): WebPage {
  return {
    status: 404,
    title: 'Not Found',
    body: html`<h1>Not Found</h1>
<p>There is no import batch here that you can see. <a href="${batchPaths.list()}">Your import batches</a>.</p>`,
  };
}

/** A batch page route: signed-out visitors sign in and come back; a 404 from the service is `noBatchPage`. */
export function batchPageHandler(
  run: (request: WebRequest, caller: Caller, batchId: number) => Promise<WebReply>,
) {
  return webHandler(async (request) => {
    const batchId = Number(request.params.batch_id);
    const caller = sessionCaller(request);
    if (!caller) {
      const get = request.method === 'GET';
      const back = get ? request.event.path : batchPaths.dashboard(batchId);
      return { location: `/login?return_to=${encodeURIComponent(back)}`, status: get ? 302 : 303 };
    }
    try {
      return await run(request, caller, batchId);
    } catch (error) {
      if (error instanceof HttpError && error.status === 404) return noBatchPage();
      throw error;
    }
  });
}

/** Answers for a whole action the dashboard shows in its error box instead of an error page. */
const SHOWN_STATUSES = new Set([409, 422, 503]);

const tally = (outcomes: readonly EntryOutcome[], kind: EntryOutcome['outcome']) =>
  outcomes.filter((outcome) => outcome.outcome === kind).length;

/**
 * Runs an action on all of the batch's imports. When every import took it or had nothing to do,
 * back to the dashboard with a notice and the two counts (numbers only: nothing else from the
 * address is shown); when some refused, the dashboard at once with each refusal and its reason.
 */
export async function actOnAll(
  request: WebRequest,
  caller: Caller,
  batchId: number,
  notice: BatchNoticeKey,
  act: () => Promise<BatchActionResult>,
): Promise<WebReply> {
  let result: BatchActionResult;
  try {
    result = await act();
  } catch (error) {
    if (!(error instanceof HttpError && SHOWN_STATUSES.has(error.status))) throw error;
    const problems: OutcomeProblems = { message: error.message, failed: [] };
    return dashboardPage(request, await batchDashboard(caller, batchId), { status: error.status, problems });
  }
  const failed = result.outcomes.filter((outcome) => outcome.outcome === 'failed');
  if (failed.length > 0)
    return dashboardPage(request, await batchDashboard(caller, batchId), {
      problems: {
        message: `${failed.length} of ${result.outcomes.length} imports refused.`,
        failed,
        done: tally(result.outcomes, 'done'),
      },
    });
  const done = tally(result.outcomes, 'done');
  const skipped = tally(result.outcomes, 'skipped');
  return {
    location: `${batchPaths.dashboard(batchId)}?notice=${notice}&done=${done}&skipped=${skipped}`,
    status: 303,
  };
}
