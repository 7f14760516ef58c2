import type { APIGatewayProxyEvent } from 'aws-lambda';

/**
 * The parts of a request credentials are read from: an API Gateway proxy event has them, and the
 * Git front end builds the same three from its HTTP request, so both authenticate with one code.
 */
export type CredentialSource = Pick<
  APIGatewayProxyEvent,
  'headers' | 'queryStringParameters' | 'pathParameters'
>;

/** What a request presented to prove who it is, before anything is looked up. */
export type PresentedCredentials =
  | { readonly kind: 'none' }
  | { readonly kind: 'basic'; readonly username: string; readonly password: string }
  | { readonly kind: 'token'; readonly token: string }
  /** `Authorization: RemoteAuth <token>`: an LFS action's own credential, from a batch answer. */
  | { readonly kind: 'remote-auth'; readonly token: string }
  | { readonly kind: 'malformed' };

/** Case-insensitive header lookup (API Gateway keeps the client's spelling). */
export function header(event: Pick<APIGatewayProxyEvent, 'headers'>, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === wanted && value !== undefined) return value;
  }
  return undefined;
}

/**
 * Reads `Authorization: Basic|token|Bearer ...` or the `access_token` query parameter, the forms
 * GitHub's API accepts, and `RemoteAuth`, which only LFS object routes accept. The header wins
 * when both are sent.
 */
export function presentedCredentials(event: Omit<CredentialSource, 'pathParameters'>): PresentedCredentials {
  const authorization = header(event, 'authorization');
  if (authorization === undefined) {
    const queryToken = event.queryStringParameters?.access_token;
    return queryToken ? { kind: 'token', token: queryToken } : { kind: 'none' };
  }
  const match = /^\s*(\S+)\s+(\S+)\s*$/.exec(authorization);
  if (!match) return { kind: 'malformed' };
  const [, scheme = '', value = ''] = match;
  switch (scheme.toLowerCase()) {
    case 'basic': {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 1) return { kind: 'malformed' };
      return { kind: 'basic', username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
    }
    case 'token':
    case 'bearer':
      return { kind: 'token', token: value };
    case 'remoteauth':
      return { kind: 'remote-auth', token: value };
    default:
      return { kind: 'malformed' };
  }
}
