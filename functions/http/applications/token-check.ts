import { apiHandler } from '#http/middleware/http-stack';
import { checkToken } from './check-token.ts';
import { TOKEN_IN_BODY } from './token-in-body.ts';

/** POST /applications/:client_id/token */
export const handler = apiHandler(TOKEN_IN_BODY, (request) => checkToken(request, request.body.access_token));
