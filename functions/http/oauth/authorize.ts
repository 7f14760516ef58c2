import { webHandler } from '#http/middleware/web-stack';
import {
  type AuthorizeReads,
  authorizeReads,
  checkAuthorizeRequest,
  startAuthorization,
} from '#services/oauth-flow';
import { config } from '#shared/config';
import { publicUrls } from '#shared/urls';
import { authorizePath, consentPage, errorPage, queryParams } from './authorize-views.ts';

/**
 * GET /login/oauth/authorize (spec §4.4): checks the request, sends signed-out users to sign in
 * first, and either issues a code at once (everything requested was granted before) or asks.
 */
export const handler = webHandler<AuthorizeReads>(
  async (request) => {
    const read = queryParams(request);
    if ('repeated' in read) return errorPage(400, `The ${read.repeated} parameter was given more than once.`);
    const checked = await checkAuthorizeRequest(
      read.params,
      config().docsUrl,
      publicUrls(config(), request.event),
      request.along,
      request.event.requestContext?.identity?.sourceIp,
    );
    if (checked.kind === 'invalid') return errorPage(checked.status, checked.message);
    if (checked.kind === 'redirect') return { location: checked.location };
    if (!request.user)
      return { location: `/login?return_to=${encodeURIComponent(authorizePath(read.params))}` };
    const start = await startAuthorization(request.user.login, checked.request, request.along);
    if (start.kind === 'issued') return { location: start.location };
    return consentPage(request, checked.request, start.alreadyGranted);
  },
  // The application, the grant and its generation in the round trip that reads the signed-in user.
  { readWithUser: ({ query }) => authorizeReads(query.client_id) },
);
