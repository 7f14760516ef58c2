import { randomUUID } from 'node:crypto';
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { type GatewayResponseType, gatewayAnswer } from '#cdk/gateway-responses';
import { VIEWER_REQUEST_FUNCTION_SOURCE } from '#cdk/viewer-request-function';
import { isBinaryMediaType } from '#shared/binary-media';
import { corsPreflightHeaders } from '#shared/cors';
import { GATEWAY_ERROR_BODIES } from '#shared/errors';
import {
  apiGatewayResourcePath,
  byPrecedence,
  type CompiledRoute,
  compile,
  matchRoute,
} from '#shared/route-match';
import { type HttpMethod, type Route, routeId, servedBy } from '#shared/routes';

const HTTP_METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

import type { ConcurrencyLimit } from './lambda-concurrency.ts';
import { loadViewerRequestFunction, passedAtEdge } from './viewer-request.ts';
import { asZipFunction } from './zip-runtime.ts';

export type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/**
 * What API Gateway (a REST API with Lambda proxy integrations) and the synchronous Lambda
 * invocation behind it refuse, so that a request that fails in AWS fails here too. The answers
 * are the deployed API's gateway responses (`lib/cdk/rest-api.ts`): 413 in GitHub's shape, and
 * for 5xx the status API Gateway picks with the DEFAULT_5XX body.
 */
export interface GatewayLimits {
  /**
   * API Gateway's request payload quota (10 MB): a larger body gets 413 and no function runs. Only
   * a chunked body (no Content-Length) gets this far over the distribution's bound
   * (`MAX_REQUEST_BODY_BYTES`), and only such a body can reach Lambda's limit below.
   */
  readonly maxRequestBytes: number;
  /**
   * Lambda's synchronous payload limit (6 MB), each way, on the serialized JSON (binary bodies
   * base64-encoded): a larger event is refused by Lambda, which API Gateway answers with 500; a
   * larger proxy result fails the invocation, which it answers with 502.
   */
  readonly maxInvocationBytes: number;
  /** API Gateway's integration timeout (29 s): then 504, while the function runs on. */
  readonly integrationTimeoutMs: number;
}

export const API_GATEWAY_LIMITS: GatewayLimits = Object.freeze({
  maxRequestBytes: 10 * 1024 * 1024,
  maxInvocationBytes: 6 * 1024 * 1024,
  integrationTimeoutMs: 29_000,
});

const HANDLERS_DIR = new URL('../../functions/http/', import.meta.url);

/**
 * Imports every route's real handler module, so a broken handler fails the start, not a request.
 * A handler given in `handlers` (by the route's handler id) is used instead: the benchmark's floor
 * behind this gateway is one.
 */
export async function loadRoutes(
  routes: readonly Route[],
  handlers: Readonly<Record<string, Handler>> = {},
): Promise<CompiledRoute<Handler>[]> {
  const compiled = await Promise.all(
    routes.map(async (route) => {
      const given = handlers[route.handler];
      if (given) return compile(route, given);
      const module = (await import(new URL(`${route.handler}.ts`, HANDLERS_DIR).href)) as {
        handler?: Handler;
      };
      if (typeof module.handler !== 'function')
        throw new Error(`functions/http/${route.handler}.ts exports no handler`);
      return compile(route, module.handler);
    }),
  );
  return compiled.sort(byPrecedence);
}

const NO_BODY = Buffer.alloc(0);

function readBody(request: IncomingMessage, maxBytes: number): Promise<Buffer | 'too-large'> | Buffer {
  // A request that declares no body (no Content-Length, or 0, and no Transfer-Encoding) has none:
  // Node's parser has already ended it, there is nothing to wait for, and Node's server discards
  // the unread stream itself once the response is sent.
  const length = request.headers['content-length'];
  if ((length === undefined || length === '0') && request.headers['transfer-encoding'] === undefined)
    return NO_BODY;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
    });
    request.on('end', () => resolve(size > maxBytes ? 'too-large' : Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

/** The REST API (v1) proxy event API Gateway would send for this request. */
function toEvent(
  request: IncomingMessage,
  url: URL,
  body: Buffer,
  compiled: CompiledRoute<Handler>,
  pathParameters: Record<string, string>,
): APIGatewayProxyEvent {
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    const name = request.rawHeaders[i] ?? '';
    const value = request.rawHeaders[i + 1] ?? '';
    headers[name] = value;
    const values = multiValueHeaders[name];
    if (values) values.push(value);
    else multiValueHeaders[name] = [value];
  }
  const query: Record<string, string> = {};
  const multiQuery: Record<string, string[]> = {};
  for (const [name, value] of url.searchParams) {
    query[name] = value;
    const values = multiQuery[name];
    if (values) values.push(value);
    else multiQuery[name] = [value];
  }
  const hasQuery = Object.keys(query).length > 0;
  // API Gateway with binaryMediaTypes: a binary Content-Type arrives base64-encoded, any other as text.
  const binary = isBinaryMediaType(request.headers['content-type']);
  return {
    resource: compiled.route.path,
    path: url.pathname,
    httpMethod: request.method ?? 'GET',
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? multiQuery : null,
    pathParameters: compiled.params.length > 0 ? pathParameters : null,
    stageVariables: null,
    body: body.length > 0 ? body.toString(binary ? 'base64' : 'utf8') : null,
    isBase64Encoded: binary && body.length > 0,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      domainName: request.headers.host ?? 'localhost',
      httpMethod: request.method ?? 'GET',
      identity: {
        sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
        userAgent: request.headers['user-agent'] ?? null,
      } as APIGatewayProxyEvent['requestContext']['identity'],
      path: url.pathname,
      protocol: `HTTP/${request.httpVersion}`,
      requestId: randomUUID(),
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath: compiled.route.path,
      stage: 'local',
    },
  };
}

/** Each route's function name, worked out once (`routeId` splits and joins its handler path). */
const functionNames = new WeakMap<Route, string>();
const ignore = (): undefined => undefined;

function lambdaContext(route: Route, requestId: string): Context {
  let functionName = functionNames.get(route);
  if (functionName === undefined) {
    functionName = routeId(route);
    functionNames.set(route, functionName);
  }
  const deadline = Date.now() + 30_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: ignore,
    fail: ignore,
    succeed: ignore,
  };
}

function send(response: ServerResponse, result: APIGatewayProxyResult): void {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {}))
    headers[name] = values.map(String);
  response.writeHead(result.statusCode, headers);
  response.end(result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
}

/** The route's function, run in this process as Lambda would run it: a zip function, without git. */
const invoke = (
  compiled: CompiledRoute<Handler>,
  event: APIGatewayProxyEvent,
): Promise<APIGatewayProxyResult> =>
  asZipFunction(() => compiled.handler(event, lambdaContext(compiled.route, event.requestContext.requestId)));

/** A Lambda payload's size as Lambda counts it: its serialized JSON. */
const payloadBytes = (payload: unknown): number => Buffer.byteLength(JSON.stringify(payload));

/**
 * An upper bound of `payloadBytes(payload)`, found without serializing: a string's UTF-16 unit
 * serializes to at most 6 bytes (`\u001f`), a number, boolean or null to at most 24 characters,
 * and a value with its own `toJSON` is not bounded. Nearly every payload is far below the limit
 * by this bound, and skips the serialization (two per request, about 8 µs); near the limit the
 * exact size decides, as before.
 */
export function payloadBytesAtMost(value: unknown): number {
  if (typeof value === 'string') return 6 * value.length + 2;
  if (value === null || typeof value !== 'object') return 24;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return Number.POSITIVE_INFINITY;
  let total = 2;
  // Holes in an array serialize as `null`: count every index.
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) total += payloadBytesAtMost(value[i]) + 1;
    return total;
  }
  for (const key of Object.keys(value))
    total += 6 * key.length + 4 + payloadBytesAtMost((value as Record<string, unknown>)[key]);
  return total;
}

/** Whether the payload is over Lambda's limit, and its exact size when it may be. */
const payloadOver = (payload: unknown, limit: number): number | false => {
  if (payloadBytesAtMost(payload) <= limit) return false;
  const bytes = payloadBytes(payload);
  return bytes > limit ? bytes : false;
};

/** The stack's gateway response for an error of `type` (DEFAULT_5XX's when it has none of its own). */
const gatewayFailure = (status: 500 | 502 | 504, type: GatewayResponseType): APIGatewayProxyResult => {
  const answer = gatewayAnswer(type, status);
  return { statusCode: answer.status, headers: { ...answer.headers }, body: JSON.stringify(answer.body) };
};

/**
 * One Lambda proxy integration behind API Gateway: the event and the result within Lambda's
 * payload limit, the invocation within the function's concurrency, the answer within the
 * integration timeout. A refusal is logged (without the request's contents) as API Gateway's
 * execution log would record it, and answered with the stack's gateway response for its type.
 */
async function invokeBehindGateway(
  compiled: CompiledRoute<Handler>,
  event: APIGatewayProxyEvent,
  limits: GatewayLimits,
  concurrency: ConcurrencyLimit | undefined,
): Promise<APIGatewayProxyResult> {
  const refuse = (status: 500 | 502 | 504, reason: string, type: GatewayResponseType = 'DEFAULT_5XX') => {
    const answer = gatewayFailure(status, type);
    console.warn(
      `local API Gateway: ${compiled.route.method} ${compiled.route.path}: ${reason}; answered ${answer.statusCode}`,
    );
    return answer;
  };
  const eventBytes = payloadOver(event, limits.maxInvocationBytes);
  if (eventBytes !== false)
    return refuse(
      500,
      `the event (${eventBytes} bytes) exceeds Lambda's ${limits.maxInvocationBytes}-byte payload limit`,
    );
  // Lambda refuses an invocation beyond the function's concurrency (429 TooManyRequestsException)
  // before any of its code runs; API Gateway answers that as an INTEGRATION_FAILURE.
  const leave = concurrency?.enter();
  if (concurrency && !leave)
    return refuse(
      500,
      `Lambda throttled the function (TooManyRequestsException: its concurrency of ${concurrency.limit} is in use)`,
      'INTEGRATION_FAILURE',
    );
  const result = await new Promise<APIGatewayProxyResult | 'timed-out'>((resolve, reject) => {
    const timer = setTimeout(() => resolve('timed-out'), limits.integrationTimeoutMs);
    // The function runs on after a timeout, as in AWS; its late answer or failure has no one to hear it.
    const invocation = invoke(compiled, event);
    // Its place in the function's concurrency is taken until it ends, timed out or not.
    if (leave) invocation.then(leave, leave);
    invocation.then(
      (answer) => {
        clearTimeout(timer);
        resolve(answer);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
  if (result === 'timed-out')
    return refuse(
      504,
      `no answer within the ${limits.integrationTimeoutMs} ms integration timeout`,
      'INTEGRATION_TIMEOUT',
    );
  const resultBytes = payloadOver(result, limits.maxInvocationBytes);
  if (resultBytes !== false)
    return refuse(
      502,
      `the response (${resultBytes} bytes) exceeds Lambda's ${limits.maxInvocationBytes}-byte payload limit`,
    );
  return result;
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  send(response, {
    statusCode: status,
    headers: { 'Content-Type': 'application/json; charset=utf-8' },
    body: JSON.stringify(body),
  });
}

export interface LocalHttpServer {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

/** Hop-by-hop headers (and `Expect`, which this hop has answered): not forwarded. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'upgrade',
  'expect',
]);
const endToEnd = (headers: IncomingHttpHeaders): IncomingHttpHeaders =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase())));

const LOCAL_ORIGIN = 'http://localhost';

/**
 * The request's URL when its request-target is in origin-form (`/path?query`, RFC 9112 3.2.1), the
 * one form CloudFront hands an origin, whose host is always its own; otherwise undefined. Refused:
 * absolute-form (`http://host/…`), authority-form (CONNECT's `host:port`, which Node's server
 * passes to its `connect` event), asterisk-form, and a path a URL parser reads as an authority:
 * `//host/…`, `/\host/…` (WHATWG URLs read `\` as `/`) or one that becomes either once the
 * parser drops tabs and newlines.
 */
export function originFormUrl(target: string | undefined): URL | undefined {
  if (!target?.startsWith('/') || target[1] === '/' || target[1] === '\\') return undefined;
  const url = new URL(target, LOCAL_ORIGIN);
  return url.origin === LOCAL_ORIGIN ? url : undefined;
}

/** `ip:port` of the connection, as CloudFront writes `CloudFront-Viewer-Address`. */
const viewerAddress = (request: IncomingMessage): string =>
  `${request.socket.remoteAddress ?? '127.0.0.1'}:${request.socket.remotePort ?? 0}`;

/**
 * What the CDN's path behaviour does in AWS for the Git front end's paths: the request as it came
 * (method, path, query, headers) streamed to the front end and its answer streamed back, past API
 * Gateway and its limits. Only the path and query are the request's: the host and port are always
 * the front end's. A front end that cannot be reached is 502, as CloudFront answers.
 *
 * A front end may answer before it has read the body (a refusal: 401, 403, 404, 413) and close.
 * Its answer is the client's answer, as CloudFront and the load balancer pass on an origin's early
 * answer: the rest of the body is no longer sent upstream but read and dropped here, so the
 * client's connection ends cleanly after the answer rather than with a reset that loses it.
 */
function forward(request: IncomingMessage, url: URL, response: ServerResponse, frontEnd: URL): void {
  let answered = false;
  const upstream = httpRequest(
    {
      hostname: frontEnd.hostname,
      port: frontEnd.port,
      path: `${url.pathname}${url.search}`,
      method: request.method,
      // CloudFront's header (the Git behaviours' origin request policy adds it), set as CloudFront
      // sets it: whatever the client sent is replaced. The front end bounds anonymous clients by it.
      headers: { ...endToEnd(request.headers), 'cloudfront-viewer-address': viewerAddress(request) },
    },
    (answer) => {
      answered = true;
      const early = !request.complete;
      if (early) {
        request.unpipe(upstream);
        request.resume();
      }
      response.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
      pipeline(answer, response).then(
        // The front end waits for a body it will not get: let it go.
        () => early && upstream.destroy(),
        () => response.destroy(),
      );
    },
  );
  // Once answered, a failed write of the unread body is the front end closing: its answer stands
  // (and a cut answer fails its own pipeline above).
  upstream.on('error', () => {
    if (answered) return;
    if (response.headersSent) response.destroy();
    else sendJson(response, 502, GATEWAY_ERROR_BODIES.serverError);
  });
  response.on('close', () => {
    if (!response.writableFinished) upstream.destroy();
  });
  request.on('error', () => upstream.destroy());
  request.pipe(upstream);
}

/**
 * Serves the route table on 127.0.0.1 the way CloudFront and API Gateway do: the distribution's
 * viewer-request function (a Content-Length over the bound is 413, a GET no route serves goes to
 * the not-found page), then match the route, build the proxy
 * event, invoke the real handler in-process within API Gateway's and Lambda's limits, write its
 * result. Unknown routes get the same 404 body as the deployed API's gateway response. The paths of
 * the Git front end's routes (`servedBy: 'git-frontend'`, whatever the method) go to `gitFrontend`
 * instead, as the CDN sends them there in AWS, without those limits.
 */
export async function startHttpServer(options: {
  routes: readonly Route[];
  port: number;
  /** API Gateway's limits; tests may lower one to reach it with little data or time. */
  limits?: GatewayLimits;
  /** The Git front end's URL; without one its paths are unknown routes here. */
  gitFrontend?: string;
  /** Handlers by route handler id, instead of the modules under `functions/http/` (see `loadRoutes`). */
  handlers?: Readonly<Record<string, Handler>>;
  /**
   * Lambda's concurrency limit of a route's function (its reserved concurrency, or the account's
   * shared by several), if any (`lambda-concurrency.ts`): none by default, as locally nothing
   * bounds it.
   */
  concurrency?: (route: Route) => ConcurrencyLimit | undefined;
}): Promise<LocalHttpServer> {
  const limits = options.limits ?? API_GATEWAY_LIMITS;
  const compiled = await loadRoutes(
    options.routes.filter((route) => servedBy(route) === 'api'),
    options.handlers,
  );
  const frontEndPaths = options.routes
    .filter((route) => servedBy(route) === 'git-frontend')
    .map((route) => compile(route, undefined));
  const gitFrontend = options.gitFrontend === undefined ? undefined : new URL(options.gitFrontend);
  // The web distribution's viewer-request function on every path but Git's, as deployed.
  const viewerRequest = loadViewerRequestFunction(VIEWER_REQUEST_FUNCTION_SOURCE);
  const server = createServer(async (request, response) => {
    try {
      // Nothing in a request names another host: the gateway contacts no one for any other form.
      const sent = originFormUrl(request.url);
      if (!sent) return sendJson(response, 400, GATEWAY_ERROR_BODIES.badRequest);
      if (gitFrontend && matchRoute(frontEndPaths, undefined, sent.pathname))
        return forward(request, sent, response, gitFrontend);
      const url = passedAtEdge(viewerRequest, request, sent, response);
      if (!url) return;
      const resourcePath = apiGatewayResourcePath(url.pathname);
      // The CORS preflight of a `cors` route, answered in front of the function as in AWS.
      if (request.method === 'OPTIONS') {
        const methods = HTTP_METHODS.filter(
          (method) => matchRoute(compiled, method, resourcePath)?.compiled.route.cors,
        );
        if (methods.length > 0) {
          response.writeHead(204, corsPreflightHeaders(methods));
          response.end();
          return;
        }
      }
      const matched = matchRoute(compiled, request.method ?? 'GET', resourcePath);
      const reading = readBody(request, limits.maxRequestBytes);
      const body = Buffer.isBuffer(reading) ? reading : await reading;
      if (body === 'too-large') return sendJson(response, 413, GATEWAY_ERROR_BODIES.payloadTooLarge);
      if (!matched) return sendJson(response, 404, GATEWAY_ERROR_BODIES.unknownRoute);
      const event = toEvent(request, url, body, matched.compiled, matched.pathParameters);
      const concurrency = options.concurrency?.(matched.compiled.route);
      send(response, await invokeBehindGateway(matched.compiled, event, limits, concurrency));
    } catch (error) {
      // A handler that throws past its middleware stack: API Gateway answers 502 in that case.
      console.error(error);
      if (!response.headersSent) sendJson(response, 502, GATEWAY_ERROR_BODIES.serverError);
    }
  });
  // CONNECT (authority-form) never reaches the handler above; Node would drop the connection unanswered.
  server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    const response = new ServerResponse(request);
    response.shouldKeepAlive = false;
    response.assignSocket(socket as Socket);
    response.on('finish', () => socket.end());
    sendJson(response, 400, GATEWAY_ERROR_BODIES.badRequest);
  });
  await new Promise<void>((resolve) => server.listen(options.port, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://localhost:${port}`,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
