import { revokeGrant } from '#domain/authorization-service';
import { apiHandler } from '#shared/http-stack';
import { findGrant } from './find.ts';

/** DELETE /applications/grants/:id: the app's tokens for the user, and the keys it made, go too. */
export const handler = apiHandler('grants/delete', {}, async ({ caller, params }) => {
  const grant = await findGrant(caller, params.grant_id);
  await revokeGrant(grant.login, grant.clientId);
  return { status: 204 };
});
