import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { config } from '#shared/config';
import { errorBody, HttpError } from '#shared/errors';
import { logContext, logUnhandled } from '#shared/log';
import type { Route } from '#shared/routes';
import { bodyLimit } from './http-stack.ts';
import { perRoute } from './per-route.ts';

/**
 * JSON-RPC's "server error" code, which MCP's SDK also answers HTTP-level refusals with (405, 406):
 * what went wrong is the HTTP status and GitHub's error body in `data`.
 */
export const HTTP_REFUSAL_CODE = -32000;

/**
 * An HTTP error of the MCP endpoint as MCP clients read it: the status and headers (a Bearer
 * challenge), and a JSON-RPC error for the request's id (null when no request was read) whose
 * message is the API's message and whose `data` is the API's whole error body.
 */
export function jsonRpcErrorResult(error: HttpError, id: unknown = null): APIGatewayProxyResult {
  return {
    statusCode: error.status,
    headers: {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-store',
      ...error.details.headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      error: { code: HTTP_REFUSAL_CODE, message: error.message, data: errorBody(error, config().docsUrl) },
    }),
  };
}

/** The one place an MCP route's errors become responses; anything but an HttpError is a logged 500. */
const mcpErrors = (route: Route): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> => ({
  onError: (request) => {
    const { error } = request;
    if (error instanceof HttpError) {
      request.response = jsonRpcErrorResult(error);
      return;
    }
    logUnhandled(route.handler, request.context?.awsRequestId, error);
    request.response = jsonRpcErrorResult(new HttpError(500, 'Server Error'));
  },
});

/**
 * An MCP route's Lambda handler: log context → errors as JSON-RPC → API Gateway's body limit (the
 * same 413 as every route) → the route's work, which answers the whole HTTP response (the SDK's
 * transport speaks Streamable HTTP itself).
 */
export function mcpHandler(
  run: (event: APIGatewayProxyEvent, route: Route) => Promise<APIGatewayProxyResult>,
) {
  return perRoute((route) =>
    middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
      .use(logContext())
      .use(mcpErrors(route))
      .use(bodyLimit())
      .handler((event) => run(event, route)),
  );
}

/** A route of the MCP path that the stateless endpoint does not offer: 405, POST allowed. */
export const methodNotAllowedHandler = () =>
  mcpHandler(async () =>
    jsonRpcErrorResult(new HttpError(405, 'Method Not Allowed', { headers: { Allow: 'POST' } })),
  );
