import type { IncomingMessage, ServerResponse } from 'node:http';
import { runInNewContext } from 'node:vm';

type Values = Record<string, { value: string }>;

/** The request of a CloudFront Functions viewer-request event (runtime 2.0), as the stand-in builds it. */
export interface ViewerRequest {
  readonly method: string;
  readonly uri: string;
  readonly querystring: Values;
  /** Lower-case names; the Cookie header is not among them but in `cookies`, as CloudFront passes it. */
  readonly headers: Values;
  readonly cookies: Values;
}

/** A response the function generates instead of passing the request on. */
export interface GeneratedResponse {
  readonly statusCode: number;
  readonly statusDescription?: string;
  readonly headers?: Values;
  readonly body?: { readonly encoding: 'text' | 'base64'; readonly data: string };
}

export type ViewerRequestFunction = (event: {
  readonly version: '1.0';
  readonly context: { readonly eventType: 'viewer-request' };
  readonly viewer: { readonly ip: string };
  readonly request: ViewerRequest;
}) => ViewerRequest | GeneratedResponse;

/**
 * Compiles a CloudFront Function's source into its `handler`, in a context of its own: without
 * Node's globals (`require`, `Buffer`, `process`), which the edge runtime does not have either.
 */
export function loadViewerRequestFunction(source: string): ViewerRequestFunction {
  const handler: unknown = runInNewContext(`${source}\nhandler;`, Object.create(null), {
    filename: 'cloudfront-function.js',
  });
  if (typeof handler !== 'function') throw new Error('the CloudFront Function defines no handler');
  return handler as ViewerRequestFunction;
}

function viewerRequest(request: IncomingMessage, url: URL): ViewerRequest {
  const querystring: Values = {};
  for (const [name, value] of url.searchParams) querystring[name] ??= { value };
  const headers: Values = {};
  for (const [name, value] of Object.entries(request.headers))
    if (name !== 'cookie' && value !== undefined) headers[name] = { value: String(value) };
  const cookies: Values = {};
  for (const pair of request.headers.cookie?.split(/;\s*/) ?? []) {
    const at = pair.indexOf('=');
    if (at > 0) cookies[pair.slice(0, at)] ??= { value: pair.slice(at + 1) };
  }
  return { method: request.method ?? 'GET', uri: url.pathname, querystring, headers, cookies };
}

/**
 * What CloudFront does with a viewer-request function on a behaviour: runs it on the request and,
 * when it generates a response, answers with that without reading the body (`undefined`). A
 * returned request goes on with its URI as the function left it (the query string as sent: the
 * service's function changes only the path); the URL to go on with is returned.
 */
export function passedAtEdge(
  run: ViewerRequestFunction,
  request: IncomingMessage,
  url: URL,
  response: ServerResponse,
): URL | undefined {
  const result = run({
    version: '1.0',
    context: { eventType: 'viewer-request' },
    viewer: { ip: request.socket.remoteAddress ?? '127.0.0.1' },
    request: viewerRequest(request, url),
  });
  if (!('statusCode' in result)) {
    if (result.uri === url.pathname) return url;
    const rewritten = new URL(url);
    rewritten.pathname = result.uri;
    return rewritten;
  }
  const headers = Object.fromEntries(
    Object.entries(result.headers ?? {}).map(([name, { value }]) => [name, value]),
  );
  response.writeHead(result.statusCode, result.statusDescription, headers);
  response.end(
    result.body && Buffer.from(result.body.data, result.body.encoding === 'base64' ? 'base64' : 'utf8'),
  );
  return undefined;
}
