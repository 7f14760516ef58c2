import { webHandler } from '#http/middleware/web-stack';
import { twoFactorPage } from './sign-in-views.ts';

/** GET /login/two-factor: the code form, for a sign-in whose password step is done. */
export const handler = webHandler(async (request) =>
  request.pending ? twoFactorPage(request) : { location: '/login' },
);
