import type { APIGatewayProxyEvent } from 'aws-lambda';
import { authenticate, type Caller } from '#services/authenticate';
import { header } from '#shared/credentials';
import { HttpError } from '#shared/errors';
import type { Route } from '#shared/routes';
import { bearerChallenge } from './challenge.ts';

/** The caller of an MCP request: always a user with a token (the route is `bearer`). */
export type McpCaller = Extract<Caller, { kind: 'user'; via: 'token' }>;

/**
 * The one check of who may open the MCP endpoint: a user's OAuth or personal token in
 * `Authorization: Bearer`, through the service's one authentication (`services/authenticate.ts`).
 * A 401 carries the Bearer challenge with `resource_metadata`, so an MCP client can find the
 * authorization server and ask for a token. (The rule that only a token asked for this resource
 * opens it belongs here, beside the token check.)
 */
export async function mcpCaller(
  event: APIGatewayProxyEvent,
  route: Route,
  webUrl: string,
): Promise<McpCaller> {
  let caller: Caller;
  try {
    caller = await authenticate(event, route);
  } catch (error) {
    if (!(error instanceof HttpError) || error.status !== 401) throw error;
    const sentToken = header(event, 'authorization') !== undefined;
    throw new HttpError(401, error.message, {
      headers: {
        'WWW-Authenticate': bearerChallenge(webUrl, sentToken ? { error: 'invalid_token' } : undefined),
      },
    });
  }
  if (caller.kind !== 'user' || caller.via !== 'token')
    throw new Error('a bearer route authenticated no token');
  return caller;
}
