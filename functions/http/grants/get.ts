import { getApps } from '#data/apps';
import { apiHandler } from '#http/middleware/http-stack';
import { grantJson } from '../json/authorization.ts';
import { findGrant } from './find.ts';

/** GET /applications/grants/:id */
export const handler = apiHandler('grants/get', {}, async ({ caller, params, urls }) => {
  const grant = await findGrant(caller, params.grant_id);
  return { status: 200, body: grantJson(grant, urls, await getApps([grant.clientId])) };
});
