import { methodNotAllowedHandler } from '#http/middleware/mcp-stack';

/**
 * GET /mcp: a stateless server offers no stream of its own (Streamable HTTP: the server returns
 * `text/event-stream` "or else … HTTP 405 Method Not Allowed").
 */
export const handler = methodNotAllowedHandler();
