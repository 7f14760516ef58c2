import { webHandler } from '#http/middleware/web-stack';
import { entryPage, signInFirst } from './device-views.ts';

/** GET /login/device (RFC 8628 §3.3): the signed-in user types the code their device shows. */
export const handler = webHandler(async (request) =>
  request.user ? entryPage(request, { code: request.query.user_code ?? '' }) : signInFirst(request),
);
