/**
 * The largest request body (by its Content-Length) the API accepts: one over it is 413 `Payload
 * Too Large` before any function runs (in AWS by the web distribution's viewer-request function,
 * locally by the local API Gateway running that same function), and the handlers' own check
 * (`MAX_BODY_BYTES`) defaults to it.
 *
 * Why 1,000,000 bytes: Lambda refuses a synchronous invocation whose serialized event is over
 * 6 MiB (6,291,456 bytes), which API Gateway answers with a 500. The body is one string in that
 * JSON event, and a body byte costs at most 6 bytes there: a control character becomes `\u00XX`
 * (a binary body's base64 costs 4/3, an invalid UTF-8 byte 3). So 6,000,000 bytes at most for
 * the body, leaving 291,456 for the rest of the event: API Gateway caps the request line and
 * headers at 10,240 bytes, which appear in `headers`, `multiValueHeaders` and the paths, under
 * 190,000 bytes even escaped 6 to 1, beside about 2,000 of request context. Every body under the
 * bound fits, whatever its bytes; the endpoints need far less (a key, a description, a token).
 */
export const MAX_REQUEST_BODY_BYTES = 1_000_000;
