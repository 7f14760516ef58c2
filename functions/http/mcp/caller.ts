import type { APIGatewayProxyEvent } from 'aws-lambda';
import { authenticate, type TokenCaller } from '#services/authenticate';
import type { Route } from '#shared/routes';

/** The caller of an MCP request: always a user with a token granted for the MCP endpoint. */
export type McpCaller = TokenCaller;

/**
 * The one check of who may open the MCP endpoint: the route is `bearer`, which the service's one
 * authentication answers with the user of a token asked for this resource (RFC 8707), or a 401
 * whose Bearer challenge names the resource metadata an MCP client starts its OAuth flow from.
 */
export async function mcpCaller(event: APIGatewayProxyEvent, route: Route): Promise<McpCaller> {
  const caller = await authenticate(event, route);
  if (caller.kind !== 'user' || caller.via !== 'token')
    throw new Error('a bearer route authenticated no token');
  return caller;
}
