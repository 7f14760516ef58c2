import { webHandler } from '#http/middleware/web-stack';
import { loginPage, returnTo } from './sign-in-views.ts';

/** GET /login: the sign-in form (signed-in users go straight on). */
export const handler = webHandler(async (request) =>
  request.user ? { location: returnTo(request) } : loginPage(request),
);
