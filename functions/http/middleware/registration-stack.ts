import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { RegistrationError } from '#domain/client-registration';
import { config } from '#shared/config';
import { HttpError } from '#shared/errors';
import { logContext, logUnhandled } from '#shared/log';
import { bodyLimit } from './http-stack.ts';
import { bodyText, jsonResult } from './oauth-stack.ts';
import { perRoute } from './per-route.ts';

/**
 * The registration endpoint's stack (RFC 7591): a JSON object in, 201 with the registered client's
 * metadata out; `RegistrationError` is RFC 7591's 400 (`invalid_redirect_uri`,
 * `invalid_client_metadata`), other refusals GitHub's JSON body with their status (404 while
 * registration is off, 429 with `Retry-After`).
 */
export function registrationHandler(
  run: (body: unknown, event: APIGatewayProxyEvent) => Promise<Readonly<Record<string, unknown>>>,
) {
  return perRoute((route) =>
    middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
      .use(logContext())
      .use({
        onError: (request) => {
          const { error } = request;
          if (error instanceof RegistrationError) {
            request.response = jsonResult(400, { error: error.code, error_description: error.description });
            return;
          }
          if (error instanceof HttpError) {
            request.response = jsonResult(
              error.status,
              { message: error.message, documentation_url: config().docsUrl },
              error.details.headers ?? {},
            );
            return;
          }
          logUnhandled(route.handler, request.context?.awsRequestId, error);
          request.response = jsonResult(500, { message: 'Server Error' });
        },
      })
      .use(bodyLimit())
      .handler(async (event) => {
        let body: unknown;
        try {
          body = JSON.parse(bodyText(event));
        } catch {
          throw new RegistrationError('invalid_client_metadata', 'The request body must be a JSON object.');
        }
        return jsonResult(201, await run(body, event));
      }),
  );
}
