import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { isBinaryMediaType } from '#shared/binary-media';
import { GATEWAY_ERROR_BODIES } from '#shared/errors';
import { type Route, routeId } from '#shared/routes';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/**
 * What API Gateway (a REST API with Lambda proxy integrations) and the synchronous Lambda
 * invocation behind it refuse, so that a request that fails in AWS fails here too. The answers
 * are the deployed API's gateway responses (`lib/cdk/rest-api.ts`): 413 in GitHub's shape, and
 * for 5xx the status API Gateway picks with the DEFAULT_5XX body.
 */
export interface GatewayLimits {
  /** API Gateway's request payload quota (10 MB): a larger body gets 413 and no function runs. */
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

/**
 * Routes that carry locally what never passes through API Gateway in AWS: the Git LFS object
 * routes stand in for S3 (deployed, the batch API hands out presigned S3 URLs and these routes
 * answer 404), so objects of any size go through them, as S3 takes single PUTs of up to 5 GB.
 */
const S3_STAND_INS: ReadonlySet<string> = new Set(['git/lfs-download', 'git/lfs-upload']);
const HANDLERS_DIR = new URL('../../functions/http/', import.meta.url);

interface CompiledRoute<H = Handler> {
  readonly route: Route;
  readonly pattern: RegExp;
  readonly params: readonly string[];
  readonly handler: H;
}

/** `/api/v3/users/{login}` → a regex with one capture per parameter, as API Gateway matches. */
export function compile<H>(route: Route, handler: H): CompiledRoute<H> {
  const params: string[] = [];
  const source = route.path
    .split('/')
    .map((segment) => {
      const param = /^\{(\w+)\}$/.exec(segment);
      if (!param?.[1]) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      params.push(param[1]);
      return '([^/]+)';
    })
    .join('/');
  return { route, pattern: new RegExp(`^${source}$`), params, handler };
}

/**
 * API Gateway prefers a static path segment over a `{param}` at the same position; sorting the
 * routes this way lets first-match give the same answer.
 */
export function byPrecedence(a: Pick<CompiledRoute, 'route'>, b: Pick<CompiledRoute, 'route'>): number {
  const rank = (route: Route) => route.path.split('/').map((segment) => (segment.startsWith('{') ? 1 : 0));
  const left = rank(a.route);
  const right = rank(b.route);
  for (let i = 0; i < Math.min(left.length, right.length); i++)
    if (left[i] !== right[i]) return (left[i] ?? 0) - (right[i] ?? 0);
  return left.length - right.length;
}

/** Imports every route's real handler module, so a broken handler fails the start, not a request. */
export async function loadRoutes(routes: readonly Route[]): Promise<CompiledRoute[]> {
  const compiled = await Promise.all(
    routes.map(async (route) => {
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

/** The route API Gateway would pick for a request, with its decoded path parameters. */
export function matchRoute<T extends Pick<CompiledRoute, 'route' | 'pattern' | 'params'>>(
  compiled: readonly T[],
  method: string,
  pathname: string,
): { compiled: T; pathParameters: Record<string, string> } | undefined {
  for (const candidate of compiled) {
    if (candidate.route.method !== method) continue;
    const match = candidate.pattern.exec(pathname);
    if (!match) continue;
    const pathParameters: Record<string, string> = {};
    for (const [index, name] of candidate.params.entries()) {
      const value = safeDecode(match[index + 1] ?? '');
      if (value === undefined) return undefined;
      pathParameters[name] = value;
    }
    return { compiled: candidate, pathParameters };
  }
  return undefined;
}

function readBody(request: IncomingMessage, maxBytes: number): Promise<Buffer | 'too-large'> {
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

function safeDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

/** The REST API (v1) proxy event API Gateway would send for this request. */
function toEvent(
  request: IncomingMessage,
  url: URL,
  body: Buffer,
  compiled: CompiledRoute,
  pathParameters: Record<string, string>,
): APIGatewayProxyEvent {
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    const name = request.rawHeaders[i] ?? '';
    const value = request.rawHeaders[i + 1] ?? '';
    headers[name] = value;
    multiValueHeaders[name] = [...(multiValueHeaders[name] ?? []), value];
  }
  const query: Record<string, string> = {};
  const multiQuery: Record<string, string[]> = {};
  for (const [name, value] of url.searchParams) {
    query[name] = value;
    multiQuery[name] = [...(multiQuery[name] ?? []), value];
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

function lambdaContext(route: Route, requestId: string): Context {
  const deadline = Date.now() + 30_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: routeId(route),
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${routeId(route)}`,
    memoryLimitInMB: '512',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${routeId(route)}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
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

/** The route's function, run in this process as Lambda would run it. */
const invoke = (compiled: CompiledRoute, event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> =>
  compiled.handler(event, lambdaContext(compiled.route, event.requestContext.requestId));

/** A Lambda payload's size as Lambda counts it: its serialized JSON. */
const payloadBytes = (payload: unknown): number => Buffer.byteLength(JSON.stringify(payload));

const gatewayFailure = (status: 500 | 502 | 504): APIGatewayProxyResult => ({
  statusCode: status,
  headers: { 'Content-Type': 'application/json; charset=utf-8' },
  body: JSON.stringify(GATEWAY_ERROR_BODIES.serverError),
});

/**
 * One Lambda proxy integration behind API Gateway: the event and the result within Lambda's
 * payload limit, the answer within the integration timeout. A refusal is logged (without the
 * request's contents) as API Gateway's execution log would record it.
 */
async function invokeBehindGateway(
  compiled: CompiledRoute,
  event: APIGatewayProxyEvent,
  limits: GatewayLimits,
): Promise<APIGatewayProxyResult> {
  const refuse = (status: 500 | 502 | 504, reason: string) => {
    console.warn(
      `local API Gateway: ${compiled.route.method} ${compiled.route.path}: ${reason}; answered ${status}`,
    );
    return gatewayFailure(status);
  };
  const eventBytes = payloadBytes(event);
  if (eventBytes > limits.maxInvocationBytes)
    return refuse(
      500,
      `the event (${eventBytes} bytes) exceeds Lambda's ${limits.maxInvocationBytes}-byte payload limit`,
    );
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timed-out'>((resolve) => {
    timer = setTimeout(() => resolve('timed-out'), limits.integrationTimeoutMs);
  });
  const invocation = invoke(compiled, event);
  // The function runs on after a timeout, as in AWS; its late failure has no one to answer.
  invocation.catch(() => undefined);
  const result = await Promise.race([invocation, timedOut]).finally(() => clearTimeout(timer));
  if (result === 'timed-out')
    return refuse(504, `no answer within the ${limits.integrationTimeoutMs} ms integration timeout`);
  const resultBytes = payloadBytes(result);
  if (resultBytes > limits.maxInvocationBytes)
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

/**
 * Serves the route table on 127.0.0.1 the way API Gateway does: match the route, build the proxy
 * event, invoke the real handler in-process within API Gateway's and Lambda's limits, write its
 * result. Unknown routes get the same 404 body as the deployed API's gateway response.
 */
export async function startHttpServer(options: {
  routes: readonly Route[];
  port: number;
  /** API Gateway's limits; tests may lower one to reach it with little data or time. */
  limits?: GatewayLimits;
}): Promise<LocalHttpServer> {
  const limits = options.limits ?? API_GATEWAY_LIMITS;
  const compiled = await loadRoutes(options.routes);
  const server = createServer(async (request, response) => {
    try {
      const url = new URL(request.url ?? '/', 'http://localhost');
      const matched = matchRoute(compiled, request.method ?? 'GET', url.pathname);
      const standsInForS3 = matched !== undefined && S3_STAND_INS.has(matched.compiled.route.handler);
      const body = await readBody(request, standsInForS3 ? Number.POSITIVE_INFINITY : limits.maxRequestBytes);
      if (body === 'too-large') return sendJson(response, 413, GATEWAY_ERROR_BODIES.payloadTooLarge);
      if (!matched) return sendJson(response, 404, GATEWAY_ERROR_BODIES.unknownRoute);
      const event = toEvent(request, url, body, matched.compiled, matched.pathParameters);
      if (standsInForS3) return send(response, await invoke(matched.compiled, event));
      send(response, await invokeBehindGateway(matched.compiled, event, limits));
    } catch (error) {
      // A handler that throws past its middleware stack: API Gateway answers 502 in that case.
      console.error(error);
      if (!response.headersSent) sendJson(response, 502, GATEWAY_ERROR_BODIES.serverError);
    }
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
