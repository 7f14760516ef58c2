import { webHandler } from '#http/middleware/web-stack';
import {
  type AuthorizeReads,
  approveAuthorization,
  authorizeReads,
  checkAuthorizeRequest,
  denyAuthorization,
} from '#services/oauth-flow';
import { config } from '#shared/config';
import { publicUrls } from '#shared/urls';
import { authorizePath, errorPage, formParams } from './authorize-views.ts';

/**
 * POST /login/oauth/authorize: the consent form (CSRF-checked by the stack). Everything is checked
 * again from the hidden fields; Cancel sends `access_denied` to the registered callback, Authorize
 * issues a code for the ticked scopes among those requested.
 */
export const handler = webHandler<AuthorizeReads>(
  async (request) => {
    const read = formParams(request);
    if ('repeated' in read) return errorPage(400, `The ${read.repeated} parameter was given more than once.`);
    const { docsUrl } = config();
    const checked = await checkAuthorizeRequest(
      read.params,
      docsUrl,
      publicUrls(config(), request.event),
      request.along,
      request.event.requestContext?.identity?.sourceIp,
    );
    if (checked.kind === 'invalid') return errorPage(checked.status, checked.message);
    if (checked.kind === 'redirect') return { location: checked.location };
    if (!request.user)
      return { location: `/login?return_to=${encodeURIComponent(authorizePath(read.params))}`, status: 303 };
    const decision = request.form.get('decision');
    if (decision === 'cancel') return { location: denyAuthorization(checked.request, docsUrl) };
    if (decision !== 'authorize') return errorPage(400, 'Choose Authorize or Cancel.');
    const location = await approveAuthorization(
      request.user.login,
      checked.request,
      request.form.getAll('granted_scope'),
      request.along,
    );
    return { location, status: 303 };
  },
  // The application and the grant's generation in the round trip that reads the signed-in user.
  { readWithUser: ({ form }) => authorizeReads(form.get('client_id') ?? undefined) },
);
