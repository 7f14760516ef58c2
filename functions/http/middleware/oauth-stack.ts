import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { OAuthError, tokenErrorFields } from '#domain/oauth-errors';
import { config } from '#shared/config';
import { PUBLIC_CORS_HEADERS } from '#shared/cors';
import { header, presentedCredentials } from '#shared/credentials';
import { HttpError, TransientFailure } from '#shared/errors';
import { logContext, logUnhandled } from '#shared/log';
import { type PublicUrls, publicUrls } from '#shared/urls';
import { bodyLimit } from './http-stack.ts';
import { perRoute } from './per-route.ts';

/**
 * The OAuth endpoints' stacks. First the token endpoint's (POST /login/oauth/access_token), then
 * the standard endpoints' (revocation, introspection: JSON only, `oauthJsonHandler`) and the
 * metadata document's (`publicDocumentHandler`). Parameters come as a form (the default), a JSON
 * object (`Content-Type: application/json`, as Octokit sends) or (token endpoint only) the query
 * string, as some clients send them; client credentials in those parameters or as HTTP Basic. The
 * token endpoint's answers, errors included, are form-encoded, JSON or XML by the Accept header,
 * and its OAuth errors are HTTP 200 as on GitHub (clients look for `error` in the body). Nothing here logs parameters: they carry
 * codes, secrets and tokens.
 */

export interface OAuthRequest {
  /** Body parameters over query parameters; only string values count. */
  readonly params: Readonly<Record<string, string | undefined>>;
  /** From HTTP Basic when sent, else from the parameters. */
  readonly client: { readonly id: string | undefined; readonly secret: string | undefined };
  /** Every `resource` parameter, in order (RFC 8707 allows several; `params` keeps the first). */
  readonly resources: readonly string[];
  readonly event: APIGatewayProxyEvent;
}

/**
 * Response fields in their form/JSON order; XML uses GitHub's own order (`XML_ORDER`). Numbers
 * (`expires_in`, `refresh_token_expires_in`, `interval`) are JSON numbers, as RFC 6749 §5.1, RFC 8628
 * and GitHub have them (oauth4webapi checks this).
 */
export type OAuthFields = Readonly<Record<string, string | number>>;

type Format = 'form' | 'json' | 'xml';
type OAuthEvent = APIGatewayProxyEvent & { oauth?: OAuthRequest; format?: Format };

const CONTENT_TYPES: Record<Format, string> = {
  form: 'application/x-www-form-urlencoded; charset=utf-8',
  json: 'application/json; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
};

/** The format the Accept header prefers (by q, then order); form-encoded when it names none of ours. */
export function negotiateFormat(accept: string | undefined): Format {
  const ranges = (accept ?? '')
    .split(',')
    .map((part, index) => {
      const [type = '', ...options] = part.split(';').map((piece) => piece.trim().toLowerCase());
      const q = options.find((option) => option.startsWith('q='));
      return { type, q: q ? Number(q.slice(2)) || 0 : 1, index };
    })
    .filter((range) => range.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const { type } of ranges) {
    if (type === 'application/json' || type.endsWith('+json')) return 'json';
    if (type === 'application/xml' || type === 'text/xml' || type.endsWith('+xml')) return 'xml';
    if (type === 'application/x-www-form-urlencoded' || type === '*/*') return 'form';
  }
  return 'form';
}

const XML_ORDER = [
  'token_type',
  'scope',
  'access_token',
  // The device authorization response (RFC 8628 §3.2) has no token fields: its own come first.
  'device_code',
  'user_code',
  'verification_uri',
  'expires_in',
  'refresh_token',
  'refresh_token_expires_in',
  'interval',
  'error',
  'error_description',
  'error_uri',
];
const XML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
};
const xmlEscape = (text: string): string => text.replace(/[&<>"']/g, (char) => XML_ESCAPES[char] ?? char);

export function serializeFields(fields: OAuthFields, format: Format): string {
  if (format === 'json') return JSON.stringify(fields);
  if (format === 'form')
    return new URLSearchParams(
      Object.entries(fields).map(([name, value]): [string, string] => [name, String(value)]),
    ).toString();
  const names = Object.keys(fields).sort((a, b) => XML_ORDER.indexOf(a) - XML_ORDER.indexOf(b));
  return `<OAuth>${names.map((name) => `<${name}>${xmlEscape(String(fields[name] ?? ''))}</${name}>`).join('')}</OAuth>`;
}

function toResult(status: number, fields: OAuthFields, format: Format): APIGatewayProxyResult {
  return {
    statusCode: status,
    // RFC 6749 §5.1: token responses must not be cached.
    headers: {
      'Content-Type': CONTENT_TYPES[format],
      'Cache-Control': 'no-store',
      Pragma: 'no-cache',
      ...PUBLIC_CORS_HEADERS,
    },
    body: serializeFields(fields, format),
  };
}

export function bodyText(event: APIGatewayProxyEvent): string {
  if (!event.body) return '';
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
}

/** The body's parameters: a JSON object when the Content-Type says JSON, a form otherwise. */
function bodyParams(event: APIGatewayProxyEvent): { params: Record<string, string>; resources: string[] } {
  const text = bodyText(event);
  const params: Record<string, string> = {};
  const resources: string[] = [];
  if (text.trim() === '') return { params, resources };
  const contentType = (header(event, 'content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (contentType === 'application/json' || contentType.endsWith('+json')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new OAuthError('invalid_request', 400, 'Problems parsing JSON');
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      throw new OAuthError('invalid_request', 400, 'Body should be a JSON object');
    for (const [name, value] of Object.entries(parsed)) if (typeof value === 'string') params[name] = value;
    const resource = (parsed as Record<string, unknown>).resource;
    for (const value of Array.isArray(resource) ? resource : [resource])
      if (typeof value === 'string') resources.push(value);
    return { params, resources };
  }
  for (const [name, value] of new URLSearchParams(text)) {
    if (!Object.hasOwn(params, name)) params[name] = value;
    if (name === 'resource') resources.push(value);
  }
  return { params, resources };
}

/**
 * Parameters and client credentials. `fromQuery`: whether query parameters count (the token
 * endpoint takes them, as GitHub does; the standard endpoints read the body alone, so that a
 * token never sits in a URL). Credentials sent both ways that disagree are `disagreement`.
 */
const oauthContext = (
  options: { readonly fromQuery: boolean; readonly disagreement: () => OAuthError } = {
    fromQuery: true,
    disagreement: () => new OAuthError('incorrect_client_credentials'),
  },
): middy.MiddlewareObj<OAuthEvent> => ({
  before: ({ event }) => {
    event.format = negotiateFormat(header(event, 'accept'));
    const body = bodyParams(event);
    const params: Record<string, string | undefined> = {
      ...(options.fromQuery ? (event.queryStringParameters ?? {}) : {}),
      ...body.params,
    };
    const resources =
      body.resources.length > 0 || !options.fromQuery
        ? body.resources
        : (event.multiValueQueryStringParameters?.resource ?? []);
    const presented = presentedCredentials(event);
    const client =
      presented.kind === 'basic'
        ? { id: presented.username, secret: presented.password }
        : { id: params.client_id, secret: params.client_secret };
    // Credentials sent both ways must agree (RFC 6749 §2.3 allows one method per request).
    const disagree =
      presented.kind === 'basic' &&
      ((params.client_id !== undefined && params.client_id !== presented.username) ||
        (params.client_secret !== undefined && params.client_secret !== presented.password));
    if (disagree) throw options.disagreement();
    event.oauth = { params, client, resources, event };
  },
});

/**
 * A request that met throttling beyond the SDK's retries: 503 with RFC 6749's
 * `temporarily_unavailable`, so that the client tries again (its code was not spent).
 */
const TEMPORARILY_UNAVAILABLE = {
  error: 'temporarily_unavailable',
  error_description: 'The service is temporarily unavailable. Please try again.',
} as const;

const oauthResponse = (handlerId: string): middy.MiddlewareObj<OAuthEvent, APIGatewayProxyResult> => ({
  after: (request) => {
    request.response = toResult(
      200,
      request.response as unknown as OAuthFields,
      request.event.format ?? 'form',
    );
  },
  onError: (request) => {
    const { error } = request;
    const format = request.event.format ?? negotiateFormat(header(request.event, 'accept'));
    const { docsUrl } = config();
    if (error instanceof OAuthError) {
      request.response = toResult(
        error.status,
        { ...tokenErrorFields(error.code, docsUrl, error.description), ...error.extra },
        format,
      );
      return;
    }
    if (error instanceof TransientFailure) {
      request.response = toResult(503, TEMPORARILY_UNAVAILABLE, format);
      return;
    }
    if (error instanceof HttpError) {
      request.response = toResult(
        error.status,
        tokenErrorFields('invalid_request', docsUrl, error.message),
        format,
      );
      return;
    }
    logUnhandled(handlerId, request.context?.awsRequestId, error);
    request.response = toResult(
      500,
      { error: 'server_error', error_description: 'Something went wrong on our side. Please try again.' },
      format,
    );
  },
});

/** Builds the token endpoint's handler: body limit → parameters and client → the exchange → one serializer. */
export function oauthHandler(run: (request: OAuthRequest) => Promise<OAuthFields>) {
  return perRoute((route) =>
    middy<OAuthEvent, APIGatewayProxyResult>()
      .use(logContext())
      .use(oauthResponse(route.handler))
      .use(bodyLimit())
      .use(oauthContext())
      .handler(async (event) => (await run(event.oauth as OAuthRequest)) as unknown as APIGatewayProxyResult),
  );
}

/** The standard endpoints' answers: always JSON, never cached (RFC 7009 §2.2, RFC 7662 §2.2). */
export function jsonResult(
  status: number,
  body: Readonly<Record<string, unknown>>,
  extraHeaders: Readonly<Record<string, string>> = {},
): APIGatewayProxyResult {
  return {
    statusCode: status,
    headers: {
      'Content-Type': CONTENT_TYPES.json,
      'Cache-Control': 'no-store',
      Pragma: 'no-cache',
      ...PUBLIC_CORS_HEADERS,
      ...extraHeaders,
    },
    body: JSON.stringify(body),
  };
}

/**
 * RFC 6749 §5.2: `invalid_client` is 401, and names the Basic scheme when the client tried it.
 * Any other OAuth error keeps its status (400 for `invalid_request`).
 */
const oauthJsonResponse = (handlerId: string): middy.MiddlewareObj<OAuthEvent, APIGatewayProxyResult> => ({
  after: (request) => {
    request.response = jsonResult(200, request.response as unknown as Record<string, unknown>);
  },
  onError: (request) => {
    const { error, event } = request;
    const { docsUrl } = config();
    if (error instanceof OAuthError) {
      const basic = presentedCredentials(event).kind === 'basic';
      const challenge: Record<string, string> =
        error.code === 'invalid_client' && basic ? { 'WWW-Authenticate': 'Basic realm="OAuth"' } : {};
      request.response = jsonResult(
        error.status,
        tokenErrorFields(error.code, docsUrl, error.description),
        challenge,
      );
      return;
    }
    if (error instanceof TransientFailure) {
      request.response = jsonResult(503, TEMPORARILY_UNAVAILABLE);
      return;
    }
    if (error instanceof HttpError) {
      request.response = jsonResult(
        error.status,
        tokenErrorFields('invalid_request', docsUrl, error.message),
      );
      return;
    }
    logUnhandled(handlerId, request.context?.awsRequestId, error);
    request.response = jsonResult(500, {
      error: 'server_error',
      error_description: 'Something went wrong on our side. Please try again.',
    });
  },
});

/**
 * Builds the handler of a standard OAuth endpoint beside the token endpoint (revocation,
 * introspection): body limit → body parameters and client credentials (as the token endpoint
 * reads them) → `run` → JSON. The client is authenticated by `run`'s service, which answers
 * failures with `OAuthError('invalid_client', 401)`.
 */
export function oauthJsonHandler(run: (request: OAuthRequest) => Promise<Readonly<Record<string, unknown>>>) {
  return perRoute((route) =>
    middy<OAuthEvent, APIGatewayProxyResult>()
      .use(logContext())
      .use(oauthJsonResponse(route.handler))
      .use(bodyLimit())
      .use(
        oauthContext({
          fromQuery: false,
          disagreement: () => new OAuthError('invalid_client', 401),
        }),
      )
      .handler(async (event) => (await run(event.oauth as OAuthRequest)) as unknown as APIGatewayProxyResult),
  );
}

/** A public JSON document (the server metadata): no credentials read, cacheable for an hour. */
export function publicDocumentHandler(
  run: (urls: PublicUrls) => Readonly<Record<string, unknown>> | Promise<Readonly<Record<string, unknown>>>,
) {
  return perRoute((route) =>
    middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
      .use(logContext())
      .use({
        onError: (request) => {
          logUnhandled(route.handler, request.context?.awsRequestId, request.error);
          request.response = jsonResult(500, { message: 'Server Error' }, { 'Cache-Control': 'no-store' });
        },
      })
      .handler(async (event) => ({
        statusCode: 200,
        headers: {
          'Content-Type': CONTENT_TYPES.json,
          'Cache-Control': 'public, max-age=3600',
          // Browser-based clients discover the server from other origins.
          ...PUBLIC_CORS_HEADERS,
        },
        body: JSON.stringify(await run(publicUrls(config(), event))),
      })),
  );
}
