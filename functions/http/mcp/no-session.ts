import { methodNotAllowedHandler } from '#http/middleware/mcp-stack';

/**
 * DELETE /mcp: there is no session to end (the server gives no `Mcp-Session-Id`); Streamable HTTP
 * lets a server refuse a termination with 405.
 */
export const handler = methodNotAllowedHandler();
