import { apiHandler } from '#http/middleware/http-stack';
import { revokeToken } from './revoke-token.ts';
import { TOKEN_IN_BODY } from './token-in-body.ts';

/** DELETE /applications/:client_id/token */
export const handler = apiHandler(TOKEN_IN_BODY, revokeToken);
