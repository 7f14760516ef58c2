import * as z from 'zod/mini';
import type { HandlerSpec } from '#http/middleware/http-stack';

/**
 * GitHub's 2020 application-side routes (`/applications/{client_id}/token` and `…/grant`) take the
 * token in the body, `{"access_token": "…"}`, so that it stays out of logs of URLs. They do what
 * the 2015 token-in-path routes beside them do; only where the token is read from differs. A body
 * without a string `access_token` is 422.
 */
const body = z.object({ access_token: z.string() });

export const TOKEN_IN_BODY: HandlerSpec<z.infer<typeof body>> = {
  body: { schema: body, resource: 'Application' },
  appTokenIn: ({ access_token }) => access_token,
};
