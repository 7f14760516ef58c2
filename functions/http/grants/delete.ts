import { apiHandler } from '#http/middleware/http-stack';
import { revokeGrant } from '#services/authorizations';
import { findGrant } from './find.ts';

/** DELETE /applications/grants/:id: the app's tokens for the user, and the keys it made, go too. */
export const handler = apiHandler({}, async ({ caller, params }) => {
  const grant = await findGrant(caller, params.grant_id);
  await revokeGrant(grant.login, grant.clientId);
  return { status: 204 };
});
