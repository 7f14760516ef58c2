import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { OAuthError, tokenErrorFields } from '#domain/oauth-errors';
import { config } from '#shared/config';
import { header, presentedCredentials } from '#shared/credentials';
import { HttpError } from '#shared/errors';
import { logContext, logUnhandled } from '#shared/log';
import { bodyLimit } from './http-stack.ts';
import { perRoute } from './per-route.ts';

/**
 * The token endpoint's stack (POST /login/oauth/access_token). Parameters come as a form (the
 * default), a JSON object (`Content-Type: application/json`, as Octokit sends) or the query string
 * (some clients do that); client credentials in those parameters or as HTTP Basic. Every answer,
 * errors included, is form-encoded, JSON or XML by the Accept header, and OAuth errors are HTTP 200
 * as on GitHub (clients look for `error` in the body). Nothing here logs parameters: they carry
 * codes, secrets and tokens.
 */

export interface OAuthRequest {
  /** Body parameters over query parameters; only string values count. */
  readonly params: Readonly<Record<string, string | undefined>>;
  /** From HTTP Basic when sent, else from the parameters. */
  readonly client: { readonly id: string | undefined; readonly secret: string | undefined };
  readonly event: APIGatewayProxyEvent;
}

/**
 * Response fields in their form/JSON order; XML uses GitHub's own order (`XML_ORDER`). Numbers
 * (`expires_in`, `interval`) are JSON numbers, as GitHub sends them and as RFC 8628 clients check.
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
  // The device authorization response (RFC 8628 §3.2).
  'device_code',
  'user_code',
  'verification_uri',
  'expires_in',
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
    headers: { 'Content-Type': CONTENT_TYPES[format], 'Cache-Control': 'no-store', Pragma: 'no-cache' },
    body: serializeFields(fields, format),
  };
}

function bodyText(event: APIGatewayProxyEvent): string {
  if (!event.body) return '';
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
}

/** The body's parameters: a JSON object when the Content-Type says JSON, a form otherwise. */
function bodyParams(event: APIGatewayProxyEvent): Record<string, string> {
  const text = bodyText(event);
  const params: Record<string, string> = {};
  if (text.trim() === '') return params;
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
    return params;
  }
  for (const [name, value] of new URLSearchParams(text))
    if (!Object.hasOwn(params, name)) params[name] = value;
  return params;
}

const oauthContext = (): middy.MiddlewareObj<OAuthEvent> => ({
  before: ({ event }) => {
    event.format = negotiateFormat(header(event, 'accept'));
    const params: Record<string, string | undefined> = {
      ...(event.queryStringParameters ?? {}),
      ...bodyParams(event),
    };
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
    if (disagree) throw new OAuthError('incorrect_client_credentials');
    event.oauth = { params, client, event };
  },
});

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
