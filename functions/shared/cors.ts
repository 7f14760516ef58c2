/**
 * CORS for the OAuth endpoints browser-based public clients call (routes marked `cors`): any
 * origin may read the answer, never with credentials (`Access-Control-Allow-Credentials` is never
 * sent, and these routes set no cookie). One definition for the answers' header, the preflight the
 * local gateway gives and the one API Gateway's mock integration gives in AWS.
 */
export const PUBLIC_CORS_HEADERS = { 'Access-Control-Allow-Origin': '*' } as const;

/** Request headers a browser may send cross-origin: client authentication and the body's type. */
export const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Accept'] as const;

/** How long a browser may keep a preflight's answer (one day). */
export const CORS_MAX_AGE_SECONDS = 86_400;

/** The preflight (`OPTIONS`) answer's headers for a path served with `methods`. */
export function corsPreflightHeaders(methods: readonly string[]): Record<string, string> {
  return {
    ...PUBLIC_CORS_HEADERS,
    'Access-Control-Allow-Methods': [...new Set([...methods, 'OPTIONS'])].join(', '),
    'Access-Control-Allow-Headers': CORS_ALLOWED_HEADERS.join(', '),
    'Access-Control-Max-Age': String(CORS_MAX_AGE_SECONDS),
  };
}
