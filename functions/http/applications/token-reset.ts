import { apiHandler } from '#http/middleware/http-stack';
import { resetToken } from './reset-token.ts';
import { TOKEN_IN_BODY } from './token-in-body.ts';

/** PATCH /applications/:client_id/token */
export const handler = apiHandler(TOKEN_IN_BODY, resetToken);
