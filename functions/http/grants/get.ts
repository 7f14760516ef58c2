import { apiHandler } from '#http/middleware/http-stack';
import { appDirectory } from '#services/apps';
import { grantJson } from '../json/authorization.ts';
import { findGrant } from './find.ts';

/** GET /applications/grants/:id */
export const handler = apiHandler({}, async ({ caller, params, urls }) => {
  const grant = await findGrant(caller, params.grant_id);
  return { status: 200, body: grantJson(grant, urls, await appDirectory([grant.clientId])) };
});
