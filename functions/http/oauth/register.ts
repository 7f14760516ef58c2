import { registrationHandler } from '#http/middleware/registration-stack';
import { registerClient } from '#services/public-clients';

/**
 * POST /login/oauth/register (RFC 7591): registers a public client when an administrator has
 * turned dynamic registration on (`npm run admin -- oauth registration enable`); 404 otherwise.
 */
export const handler = registrationHandler(async (body, event) => ({
  ...(await registerClient(body, event.requestContext?.identity?.sourceIp ?? 'unknown')),
}));
