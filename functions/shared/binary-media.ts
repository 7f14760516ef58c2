/**
 * The media types API Gateway passes as binary (`binaryMediaTypes` on the RestApi): a request
 * with one of these Content-Types reaches the function base64-encoded (`isBase64Encoded`), and a
 * function's base64 response is sent as bytes when the request's Accept names one of them. The
 * local server applies the same list, so a route that works locally works behind API Gateway.
 *
 * Git's smart-HTTP bodies (packfiles) and LFS objects are binary; everything else (JSON, forms,
 * HTML) stays text so the other stacks keep reading `event.body` as a string. Ref advertisements
 * (`info/refs`) are text too: git fetches them with `Accept: *\/*`, which would not select a binary
 * response, and they are pkt-line text.
 *
 * A page's `multipart/form-data` form (a file upload) is binary too: as text, API Gateway would
 * pass the file's bytes that are not UTF-8 as U+FFFD, and the parser would see other bytes than the
 * browser sent. No page answers with that type, so responses are unaffected.
 */
export const BINARY_MEDIA_TYPES: readonly string[] = [
  'application/x-git-upload-pack-request',
  'application/x-git-upload-pack-result',
  'application/x-git-receive-pack-request',
  'application/x-git-receive-pack-result',
  'application/octet-stream',
  'multipart/form-data',
];

/**
 * Whether a Content-Type (or one Accept entry) is in `BINARY_MEDIA_TYPES`, as API Gateway matches:
 * the `type/subtype` without parameters, case-insensitively; a `type/*` entry in the list matches
 * every subtype.
 */
export function isBinaryMediaType(contentType: string | undefined, list = BINARY_MEDIA_TYPES): boolean {
  const wanted = contentType?.split(';')[0]?.trim().toLowerCase();
  if (!wanted) return false;
  return list.some((entry) => {
    const type = entry.toLowerCase();
    return type === wanted || (type.endsWith('/*') && wanted.startsWith(type.slice(0, -1)));
  });
}
