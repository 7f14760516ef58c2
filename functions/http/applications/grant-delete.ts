import { apiHandler } from '#http/middleware/http-stack';
import { revokeGrant } from './revoke-grant.ts';
import { TOKEN_IN_BODY } from './token-in-body.ts';

/** DELETE /applications/:client_id/grant */
export const handler = apiHandler(TOKEN_IN_BODY, revokeGrant);
