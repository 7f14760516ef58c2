import { MAX_REQUEST_BODY_BYTES } from '#shared/body-limit';
import { errorPage, tooLargeMessage } from '#shared/error-page';
import { GATEWAY_ERROR_BODIES } from '#shared/errors';
import { page } from '#shared/page-layout';
import { NOT_FOUND_PAGE_PATH, ROUTES, type Route, servedBy } from '#shared/routes';

/** A generated response: CloudFront answers it without forwarding the request (or its body). */
const REFUSAL = {
  statusCode: 413,
  statusDescription: 'Payload Too Large',
  // Never cached, and what the OAuth endpoints must send with every answer (RFC 6749, 5.1).
  headers: {
    'content-type': { value: 'application/json; charset=utf-8' },
    'cache-control': { value: 'no-store' },
  },
  body: { encoding: 'text', data: JSON.stringify(GATEWAY_ERROR_BODIES.payloadTooLarge) },
};

/**
 * The same refusal for a browser's page (a form too large, mostly a file): the function's own 413
 * page, signed out and without the stylesheet, which would not fit CloudFront Functions' 10 KB.
 */
const pageRefusal = () => {
  const content = errorPage(413, tooLargeMessage(MAX_REQUEST_BODY_BYTES), false);
  return {
    ...REFUSAL,
    headers: {
      'content-type': { value: 'text/html; charset=utf-8' },
      'cache-control': { value: 'no-store' },
      'content-security-policy': { value: "default-src 'none'; frame-ancestors 'none'; base-uri 'none'" },
      'x-content-type-options': { value: 'nosniff' },
      'x-frame-options': { value: 'DENY' },
      'referrer-policy': { value: 'no-referrer' },
    },
    body: {
      encoding: 'text',
      data: page(content.title, { csrf: '' }, content.body, { styled: false }).toString(),
    },
  };
};

/** Paths that keep API Gateway's JSON 404: the REST API, GraphQL and the OAuth discovery documents. */
const API_PATHS = /^\/(?:api|\.well-known)(?:\/|$)/;

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * One regular expression for the paths API Gateway serves a GET at (each `{parameter}` any one
 * segment, so it is never narrower than API Gateway's own match): a GET on any other path is a
 * page that does not exist.
 */
export function servedGetPaths(routes: readonly Route[]): RegExp {
  const paths = [
    ...new Set(
      routes
        .filter((route) => servedBy(route) === 'api' && route.method === 'GET')
        .map((route) =>
          route.path
            .split('/')
            .map((segment) => (/^\{\w+\}$/.test(segment) ? '[^/]+' : escapeRegExp(segment)))
            .join('\\/'),
        ),
    ),
  ];
  return new RegExp(`^(?:${paths.join('|')})$`);
}

/**
 * The source of the web distribution's viewer-request function on the API's behaviour (CloudFront
 * Functions, runtime `cloudfront-js-2.0`), generated from the shared bound, body and route table,
 * so that the deployed function, the local API Gateway (which runs this very source) and the
 * handlers cannot disagree. It does two things:
 * - a request whose Content-Length is over `MAX_REQUEST_BODY_BYTES` gets 413 with the body API
 *   Gateway's REQUEST_TOO_LARGE response has, before API Gateway and Lambda see it; a browser's
 *   (Accept naming text/html) outside the API's paths gets the pages' HTML 413 instead. A function
 *   never sees the body itself: a request without Content-Length (chunked) passes, and meets API
 *   Gateway's and Lambda's own limits;
 * - a GET of a path no route serves, outside the API's paths, goes to the not-found page's path
 *   (`NOT_FOUND_PAGE_PATH`), whose function answers the HTML 404 in the site's layout (decision
 *   0135). API Gateway cannot route those itself: a greedy `/{proxy+}` may not sit beside `/{owner}`.
 *   API paths keep the gateway's JSON 404.
 */
export const VIEWER_REQUEST_FUNCTION_SOURCE = `var MAX_BYTES = ${MAX_REQUEST_BODY_BYTES};
var API_PATHS = ${API_PATHS.toString()};
var SERVED_GET_PATHS = ${servedGetPaths(ROUTES).toString()};
function handler(event) {
  var request = event.request;
  var length = request.headers['content-length'];
  if (length && Number(length.value) > MAX_BYTES) {
    var accept = request.headers['accept'];
    var page = !API_PATHS.test(request.uri) && accept && accept.value.indexOf('text/html') !== -1;
    return page ? ${JSON.stringify(pageRefusal())} : ${JSON.stringify(REFUSAL)};
  }
  if (request.method === 'GET') {
    var path = request.uri.length > 1 && request.uri.charAt(request.uri.length - 1) === '/' ? request.uri.slice(0, -1) : request.uri;
    if (!API_PATHS.test(path) && !SERVED_GET_PATHS.test(path)) request.uri = '${NOT_FOUND_PAGE_PATH}';
  }
  return request;
}
`;
