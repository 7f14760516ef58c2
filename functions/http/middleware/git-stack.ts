import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { authenticate, type Caller } from '#services/authenticate';
import { isBinaryMediaType } from '#shared/binary-media';
import { config } from '#shared/config';
import { header } from '#shared/credentials';
import { HttpError } from '#shared/errors';
import { logContext, logUnhandled } from '#shared/log';
import type { Route } from '#shared/routes';
import { type PublicUrls, publicUrls } from '#shared/urls';
import { pathParameters } from './http-stack.ts';
import { perRoute } from './per-route.ts';

/** What a Git-protocol handler gets: checked credentials and the raw request body as bytes. */
export interface GitRequest {
  readonly body: Buffer;
  readonly params: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string | undefined>>;
  readonly caller: Caller;
  readonly urls: PublicUrls;
  readonly route: Route;
  readonly event: APIGatewayProxyEvent;
  /** A request header, case-insensitively. */
  header(name: string): string | undefined;
}

/** What a handler returns: the body goes out as bytes when its Content-Type is a binary one. */
export interface GitReply {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: Buffer | string;
}

/** The Git LFS API's media type: its bodies, its errors. */
export const LFS_MEDIA_TYPE = 'application/vnd.git-lfs+json';

type StackEvent = APIGatewayProxyEvent & { caller?: Caller };

const isLfsRoute = (route: Route) => route.path.includes('/info/lfs/');

/** Git asks for credentials on a 401 with a Basic challenge; git-lfs also reads `LFS-Authenticate`. */
function challenge(route: Route): Record<string, string> {
  const realm = `Basic realm="${config().vendor === 'github' ? 'GitHub' : config().vendor}"`;
  return { 'WWW-Authenticate': realm, ...(isLfsRoute(route) ? { 'LFS-Authenticate': realm } : {}) };
}

function serialize(reply: GitReply): APIGatewayProxyResult {
  const headers = { ...reply.headers };
  const body = reply.body ?? '';
  const contentType = Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1];
  // As API Gateway with binaryMediaTypes: base64 for binary types, text for the rest.
  if (Buffer.isBuffer(body) && isBinaryMediaType(contentType))
    return { statusCode: reply.status, headers, body: body.toString('base64'), isBase64Encoded: true };
  return { statusCode: reply.status, headers, body: Buffer.isBuffer(body) ? body.toString('utf8') : body };
}

/**
 * Errors as Git clients read them, mapped in one place: plain text for smart HTTP (git prints
 * it), `{"message"}` in the LFS media type for the LFS API; a 401 carries the Basic challenge.
 */
function errorReply(
  route: Route,
  status: number,
  message: string,
  extra: Readonly<Record<string, string>> = {},
) {
  const headers = { ...(status === 401 ? challenge(route) : {}), ...extra };
  if (isLfsRoute(route))
    return serialize({
      status,
      headers: { 'Content-Type': LFS_MEDIA_TYPE, ...headers },
      body: JSON.stringify({ message, documentation_url: config().docsUrl }),
    });
  return serialize({
    status,
    headers: { 'Content-Type': 'text/plain; charset=utf-8', ...headers },
    body: `${message}\n`,
  });
}

const gitResponse = (route: Route): middy.MiddlewareObj<StackEvent, APIGatewayProxyResult> => ({
  after: (request) => {
    request.response = serialize(request.response as unknown as GitReply);
  },
  onError: (request) => {
    const { error } = request;
    if (error instanceof HttpError) {
      request.response = errorReply(route, error.status, error.message, error.details.headers);
      return;
    }
    logUnhandled(route.handler, request.context?.awsRequestId, error);
    request.response = errorReply(route, 500, 'Server Error');
  },
});

const authentication = (route: Route): middy.MiddlewareObj<StackEvent> => ({
  before: async ({ event }) => {
    event.caller = await authenticate(event, route);
  },
});

/**
 * Builds a Git-protocol route's handler (smart HTTP, the LFS API): path parameters → credentials
 * (anonymous allowed; sent credentials are checked) → the handler's one service call → the
 * response, bytes as base64. Authorisation is the service's: it depends on the repository.
 */
export function gitHandler(run: (request: GitRequest) => Promise<GitReply>) {
  return perRoute((route) =>
    middy<StackEvent, APIGatewayProxyResult>()
      .use(logContext())
      .use(gitResponse(route))
      .use(pathParameters(route))
      .use(authentication(route))
      .handler(async (event) => {
        const raw = event.body ?? '';
        const reply = await run({
          body: Buffer.from(raw, event.isBase64Encoded ? 'base64' : 'utf8'),
          params: (event.pathParameters ?? {}) as Record<string, string>,
          query: event.queryStringParameters ?? {},
          caller: event.caller ?? { kind: 'anonymous' },
          urls: publicUrls(config(), event),
          route,
          event,
          header: (name) => header(event, name),
        });
        return reply as unknown as APIGatewayProxyResult;
      }),
  );
}
