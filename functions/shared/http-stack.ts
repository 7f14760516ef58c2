import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type * as z from 'zod/mini';
import { type Route, routeFor } from '#http/routes';
import { authenticate, type Caller } from './authenticate.ts';
import { config } from './config.ts';
import {
  bodyNotObject,
  errorBody,
  GATEWAY_ERROR_BODIES,
  HttpError,
  payloadTooLarge,
  problemsParsingJson,
} from './errors.ts';
import { log } from './log.ts';
import { type PublicUrls, publicUrls } from './urls.ts';
import { validateBody } from './validate.ts';

/** What a handler gets: checked credentials, a validated body, decoded parameters. */
export interface ApiRequest<Body> {
  readonly body: Body;
  readonly params: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string | undefined>>;
  readonly caller: Caller;
  readonly urls: PublicUrls;
  readonly route: Route;
  readonly event: APIGatewayProxyEvent;
}

/** What a handler returns; the stack serializes it. */
export interface Reply {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface BodySpec<Body> {
  readonly schema: z.ZodMiniType<Body>;
  /** The `resource` named in validation errors, e.g. `Repository`. */
  readonly resource: string;
}

/** The event as it moves through the stack: middlewares add what they established. */
type StackEvent = APIGatewayProxyEvent & { parsedBody?: unknown; caller?: Caller };

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Rejects bodies over the configured limit before anything parses them (413). */
const bodyLimit = (): middy.MiddlewareObj<StackEvent> => ({
  before: ({ event }) => {
    if (
      event.body &&
      Buffer.byteLength(event.body, event.isBase64Encoded ? 'base64' : 'utf8') > config().maxBodyBytes
    ) {
      throw payloadTooLarge();
    }
  },
});

/**
 * GitHub reads request bodies as JSON whatever their Content-Type (curl -d sends a form type), so
 * the content-type check is off; an empty body counts as `{}`. Anything but an object is a 400.
 */
const jsonBody = (): middy.MiddlewareObj<StackEvent> => {
  // `disableContentTypeCheck` exists in the middleware but is missing from its type declarations.
  const parser = httpJsonBodyParser({ disableContentTypeCheck: true } as Parameters<
    typeof httpJsonBodyParser
  >[0]);
  return {
    before: async (request) => {
      const { event } = request;
      if (!METHODS_WITH_BODY.has(event.httpMethod) || !event.body || event.body.trim() === '') {
        event.parsedBody = {};
        return;
      }
      try {
        await parser.before?.(request as never);
      } catch {
        throw problemsParsingJson();
      }
      const parsed: unknown = event.body;
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw bodyNotObject();
      event.parsedBody = parsed;
    },
  };
};

const authentication = (route: Route): middy.MiddlewareObj<StackEvent> => ({
  before: async ({ event }) => {
    event.caller = await authenticate(event, route.auth);
  },
});

function jsonHeaders(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  return {
    'Content-Type': 'application/json; charset=utf-8',
    'X-GitHub-Media-Type': `${config().vendor}.v3; format=json`,
    ...extra,
  };
}

function serialize(reply: Reply): APIGatewayProxyResult {
  if (reply.body === undefined) return { statusCode: reply.status, headers: { ...reply.headers }, body: '' };
  return { statusCode: reply.status, headers: jsonHeaders(reply.headers), body: JSON.stringify(reply.body) };
}

/** Serializes replies and is the one place errors become responses. */
const httpResponse = (route: Route): middy.MiddlewareObj<StackEvent, APIGatewayProxyResult> => ({
  after: (request) => {
    request.response = serialize(request.response as unknown as Reply);
  },
  onError: (request) => {
    const { error } = request;
    if (error instanceof HttpError) {
      request.response = serialize({
        status: error.status,
        body: errorBody(error, config().docsUrl),
        headers: error.details.headers ?? {},
      });
      return;
    }
    log('error', 'unhandled error', {
      route: route.handler,
      requestId: request.context?.awsRequestId,
      error:
        error instanceof Error
          ? { name: error.name, message: error.message, stack: error.stack }
          : String(error),
    });
    request.response = serialize({
      status: 500,
      body: { ...GATEWAY_ERROR_BODIES.serverError, documentation_url: config().docsUrl },
    });
  },
});

/**
 * Builds a route's Lambda handler: body limit → JSON body → authentication → validation → the
 * handler's one domain call → serialization, with errors mapped once by `httpResponse`.
 */
export function apiHandler<Body = Record<string, never>>(
  handlerId: string,
  spec: { readonly body?: BodySpec<Body> },
  run: (request: ApiRequest<Body>) => Promise<Reply>,
) {
  const route = routeFor(handlerId);
  return middy<StackEvent, APIGatewayProxyResult>()
    .use(httpResponse(route))
    .use(bodyLimit())
    .use(jsonBody())
    .use(authentication(route))
    .handler(async (event) => {
      const body = spec.body
        ? validateBody(spec.body.schema, spec.body.resource, event.parsedBody)
        : ({} as Body);
      const reply = await run({
        body,
        params: (event.pathParameters ?? {}) as Record<string, string>,
        query: event.queryStringParameters ?? {},
        caller: event.caller ?? { kind: 'anonymous' },
        urls: publicUrls(config(), event),
        route,
        event,
      });
      return reply as unknown as APIGatewayProxyResult;
    });
}
