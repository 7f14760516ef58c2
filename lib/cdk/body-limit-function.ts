import { MAX_REQUEST_BODY_BYTES } from '#shared/body-limit';
import { GATEWAY_ERROR_BODIES } from '#shared/errors';

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
 * The source of the web distribution's viewer-request function on the API's behaviour (CloudFront
 * Functions, runtime `cloudfront-js-2.0`): a request whose Content-Length is over
 * `MAX_REQUEST_BODY_BYTES` gets 413 with the body API Gateway's REQUEST_TOO_LARGE response has,
 * before API Gateway and Lambda see it. Generated from the shared bound and body, so that the
 * deployed function, the local API Gateway (which runs this very source) and the handlers cannot
 * disagree. A function never sees the body itself: a request without Content-Length (chunked)
 * passes, and meets API Gateway's and Lambda's own limits.
 */
export const BODY_LIMIT_FUNCTION_SOURCE = `var MAX_BYTES = ${MAX_REQUEST_BODY_BYTES};
function handler(event) {
  var length = event.request.headers['content-length'];
  if (length && Number(length.value) > MAX_BYTES) return ${JSON.stringify(REFUSAL)};
  return event.request;
}
`;
