import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type * as z from 'zod/mini';
import { bearerChallenge, restResource } from '#domain/resources';
import { scopeHeader } from '#domain/scopes';
import { authenticate, type Caller, checkScopes } from '#services/authenticate';
import { setRequestActor } from '#services/request-scope';
import { actorOf } from '#services/security-log';
import { config, vendorHeader } from '#shared/config';
import { header } from '#shared/credentials';
import {
  bodyNotObject,
  errorBody,
  GATEWAY_ERROR_BODIES,
  HttpError,
  notFound,
  payloadTooLarge,
  problemsParsingJson,
} from '#shared/errors';
import { logContext, logUnhandled } from '#shared/log';
import type { Route } from '#shared/routes';
import { type PublicUrls, publicUrls } from '#shared/urls';
import { pathParametersValid, validateBody } from '#shared/validate';
import { perRoute } from './per-route.ts';

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
  /** A body that is not JSON (a file to download): sent as it is, with its media type. */
  readonly file?: { readonly contentType: string; readonly filename: string; readonly body: string };
}

export interface BodySpec<Body> {
  readonly schema: z.ZodMiniType<Body>;
  /** The `resource` named in validation errors, e.g. `Repository`. */
  readonly resource: string;
}

export interface HandlerSpec<Body> {
  readonly body?: BodySpec<Body>;
  /**
   * For an application-side route that takes the token it acts on in its body (GitHub's 2020
   * endpoints) rather than in the path: where in the validated body it is. Authentication then
   * reads that token with the application, in one round trip; a body that fails validation is
   * 422 once the application has authenticated (404 before, as for every application route).
   */
  readonly appTokenIn?: (body: Body) => string;
}

/** The event as it moves through the stack: middlewares add what they established. */
type StackEvent = APIGatewayProxyEvent & { parsedBody?: unknown; validBody?: unknown; caller?: Caller };

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Rejects bodies over the configured limit before anything parses them (413, `refusal`'s words). */
export const bodyLimit = (
  refusal: () => Error = payloadTooLarge,
): middy.MiddlewareObj<APIGatewayProxyEvent> => ({
  before: ({ event }) => {
    if (
      event.body &&
      Buffer.byteLength(event.body, event.isBase64Encoded ? 'base64' : 'utf8') > config().maxBodyBytes
    ) {
      throw refusal();
    }
  },
});

/**
 * Checks every path parameter against the route table's rule for it, first of all: a malformed or
 * over-long identifier is 404 `Not Found` (what GitHub answers for a path naming nothing) and
 * never reaches authentication or DynamoDB.
 */
export const pathParameters = (route: Pick<Route, 'path'>): middy.MiddlewareObj<APIGatewayProxyEvent> => ({
  before: ({ event }) => {
    if (!pathParametersValid(route, event.pathParameters)) throw notFound();
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

const validBody = <Body>(spec: HandlerSpec<Body>, event: StackEvent): Body =>
  spec.body ? validateBody(spec.body.schema, spec.body.resource, event.parsedBody) : ({} as Body);

const authentication = <Body>(route: Route, spec: HandlerSpec<Body>): middy.MiddlewareObj<StackEvent> => ({
  before: async ({ event }) => {
    if (spec.appTokenIn) {
      // The application is authenticated first (404 without it); only then is a bad body a 422.
      let invalid: unknown;
      try {
        event.validBody = validBody(spec, event);
      } catch (error) {
        invalid = error;
      }
      const token = invalid ? undefined : spec.appTokenIn(event.validBody as Body);
      event.caller = await authenticate(event, route, token);
      if (invalid) throw invalid;
    } else event.caller = await authenticate(event, route);
    const actor = actorOf(event.caller);
    if (actor) setRequestActor(actor);
    checkScopes(event.caller, route.scopes);
  },
});

/** `X-OAuth-Scopes` and `X-Accepted-OAuth-Scopes` go on every response to a token request. */
function scopeHeaders(event: StackEvent, route: Route): Record<string, string> {
  const caller = event.caller;
  if (caller?.kind !== 'user' || caller.via !== 'token') return {};
  return {
    'X-OAuth-Scopes': scopeHeader(caller.token.scopes),
    'X-Accepted-OAuth-Scopes': scopeHeader(route.scopes),
  };
}

/** Names of the previews routes may require, for the 415 message (GitHub named the API). */
const PREVIEW_APIS: Readonly<Record<string, string>> = { 'barred-rock': 'Source Import API' };

/** The media type a preview route's Accept header must name: `application/vnd.<vendor>.<preview>-preview`. */
export const previewMediaType = (vendor: string, preview: string): string =>
  `application/vnd.${vendor}.${preview}-preview`;

/** Whether an Accept header names the preview's media type, with or without `+json`, among others. */
export function acceptsPreview(accept: string | undefined, vendor: string, preview: string): boolean {
  if (!accept) return false;
  const wanted = previewMediaType(vendor, preview);
  return accept
    .split(',')
    .map((range) => (range.split(';')[0] ?? '').trim().toLowerCase())
    .some((type) => type === wanted || type === `${wanted}+json`);
}

/**
 * A preview route answers 415 unless the Accept header names its preview media type (GitHub's
 * message, plus the exact media type to send). Checked before authentication and any read, so the
 * answer says nothing about the repository.
 */
export const previewMediaTypeCheck = (
  route: Pick<Route, 'preview'>,
): middy.MiddlewareObj<APIGatewayProxyEvent> => ({
  before: ({ event }) => {
    const { preview } = route;
    if (preview === undefined) return;
    const { vendor } = config();
    if (acceptsPreview(header(event, 'accept'), vendor, preview)) return;
    const api = PREVIEW_APIS[preview] ?? `${preview} API`;
    throw new HttpError(
      415,
      `If you would like to help us test the ${api} during its preview period, you must specify a custom media type in the 'Accept' header (${previewMediaType(vendor, preview)}). Please see the docs for full details.`,
      { headers: { [vendorHeader(vendor, 'Media-Type')]: `${vendor}.v3; format=json` } },
    );
  },
});

function serialize(
  reply: Reply,
  extraHeaders: Readonly<Record<string, string>>,
  route?: Pick<Route, 'preview'>,
): APIGatewayProxyResult {
  const { vendor } = config();
  const headers = {
    [vendorHeader(vendor, 'Media-Type')]: route?.preview
      ? `${vendor}.${route.preview}-preview`
      : `${vendor}.v3; format=json`,
    ...extraHeaders,
    ...reply.headers,
  };
  if (reply.file)
    return {
      statusCode: reply.status,
      headers: {
        'Content-Type': reply.file.contentType,
        'Content-Disposition': `attachment; filename="${reply.file.filename.replace(/[^A-Za-z0-9._-]/g, '_')}"`,
        ...headers,
      },
      body: reply.file.body,
    };
  if (reply.body === undefined) return { statusCode: reply.status, headers, body: '' };
  return {
    statusCode: reply.status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', ...headers },
    body: JSON.stringify(reply.body),
  };
}

/** Serializes replies and is the one place errors become responses. */
const httpResponse = (route: Route): middy.MiddlewareObj<StackEvent, APIGatewayProxyResult> => ({
  after: (request) => {
    request.response = serialize(
      request.response as unknown as Reply,
      scopeHeaders(request.event, route),
      route,
    );
  },
  onError: (request) => {
    const { error } = request;
    if (error instanceof HttpError) {
      request.response = serialize(
        {
          status: error.status,
          body: errorBody(error, config().docsUrl),
          headers: {
            ...(error.details.bearerChallenge
              ? { 'WWW-Authenticate': bearerChallenge(restResource(publicUrls(config(), request.event))) }
              : {}),
            ...error.details.headers,
          },
        },
        scopeHeaders(request.event, route),
        route,
      );
      return;
    }
    logUnhandled(route.handler, request.context?.awsRequestId, error);
    const body = { ...GATEWAY_ERROR_BODIES.serverError, documentation_url: config().docsUrl };
    request.response = serialize({ status: 500, body }, {});
  },
});

/**
 * Builds a route's Lambda handler: path parameters → preview media type → body limit → JSON body → authentication → validation → the
 * handler's one domain call → serialization, with errors mapped once by `httpResponse`.
 */
export function apiHandler<Body = Record<string, never>>(
  spec: HandlerSpec<Body>,
  run: (request: ApiRequest<Body>) => Promise<Reply>,
) {
  return perRoute((route) => apiStack(route, spec, run));
}

function apiStack<Body>(
  route: Route,
  spec: HandlerSpec<Body>,
  run: (request: ApiRequest<Body>) => Promise<Reply>,
) {
  return middy<StackEvent, APIGatewayProxyResult>()
    .use(logContext())
    .use(httpResponse(route))
    .use(pathParameters(route))
    .use(previewMediaTypeCheck(route))
    .use(bodyLimit())
    .use(jsonBody())
    .use(authentication(route, spec))
    .handler(async (event) => {
      const body = spec.appTokenIn ? (event.validBody as Body) : validBody(spec, event);
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
