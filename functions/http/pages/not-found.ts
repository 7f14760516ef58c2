import { webHandler } from '#http/middleware/web-stack';
import { errorPage, NOT_FOUND_MESSAGE } from '#shared/error-page';

/**
 * GET /-/not-found: the 404 page of the web origin. The viewer-request function sends every GET
 * of a path no route serves here (decision 0135), so the page is the same locally and in AWS.
 */
export const handler = webHandler(async (request) =>
  errorPage(404, NOT_FOUND_MESSAGE, request.user !== undefined),
);
