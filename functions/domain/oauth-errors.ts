/**
 * The one catalogue of OAuth errors (spec §7.1–7.2, github-behaviour §3.3 and §3.5): GitHub's
 * `error` codes and `error_description` texts, and an `error_uri` under the configured docs URL
 * laid out as GitHub's were (`…/v3/oauth/#redirect-uri-mismatch`, `#redirect-uri-mismatch(2)` for
 * the token endpoint's). The authorize step sends them as query parameters of a redirect to the
 * registered callback; the token endpoint answers them in the format the client asked for.
 */

interface Entry {
  readonly error: string;
  readonly description: string;
  readonly anchor: string;
}

/** Errors of the authorize step: a redirect to the registered callback URL (spec §7.1). */
const AUTHORIZE = {
  application_suspended: {
    error: 'application_suspended',
    description: 'Your application has been suspended. Contact support@github.com.',
    anchor: 'application-suspended',
  },
  redirect_uri_mismatch: {
    error: 'redirect_uri_mismatch',
    description: 'The redirect_uri MUST match the registered callback URL for this application.',
    anchor: 'redirect-uri-mismatch',
  },
  access_denied: {
    error: 'access_denied',
    description: 'The user has denied your application access.',
    anchor: 'access-denied',
  },
  // RFC 8707 §2: a `resource` this server issues no tokens for.
  invalid_target: {
    error: 'invalid_target',
    description: 'The requested resource is invalid, unknown, or malformed.',
    anchor: 'invalid-target',
  },
} as const satisfies Record<string, Entry>;

/** Errors of the token endpoint (spec §7.2), answered with HTTP 200 as GitHub does. */
const TOKEN = {
  incorrect_client_credentials: {
    error: 'incorrect_client_credentials',
    description: 'The client_id and/or client_secret passed are incorrect.',
    anchor: 'incorrect-client-credentials',
  },
  redirect_uri_mismatch: {
    error: 'redirect_uri_mismatch',
    description: 'The redirect_uri MUST match the registered callback URL for this application.',
    anchor: 'redirect-uri-mismatch(2)',
  },
  bad_verification_code: {
    error: 'bad_verification_code',
    description: 'The code passed is incorrect or expired.',
    anchor: 'bad-verification-code',
  },
  // GitHub's code for refresh tokens (expiring user tokens): unknown, expired, spent, another app's.
  bad_refresh_token: {
    error: 'bad_refresh_token',
    description: 'The refresh token passed is incorrect or expired.',
    anchor: 'bad-refresh-token',
  },
  // Not in the spec's table: a suspended application gets no new tokens (see docs/decisions.md).
  application_suspended: {
    error: 'application_suspended',
    description: 'Your application has been suspended. Contact support@github.com.',
    anchor: 'application-suspended',
  },
  // RFC 6749 §5.2, for requests that cannot be read at all (unparsable body, oversized body).
  invalid_request: {
    error: 'invalid_request',
    description: 'The request could not be read.',
    anchor: 'invalid-request',
  },
  // RFC 6749 §5.2, for the standard endpoints (revocation, introspection): HTTP 401, not 200.
  invalid_client: {
    error: 'invalid_client',
    description: 'The client_id and/or client_secret passed are incorrect.',
    anchor: 'invalid-client',
  },
  // The device flow (RFC 8628 §3.5), with GitHub's texts ("Error codes for the device flow").
  authorization_pending: {
    error: 'authorization_pending',
    description: 'The authorization request is still pending.',
    anchor: 'authorization-pending',
  },
  slow_down: {
    error: 'slow_down',
    description: 'Too many requests have been made in the same timeframe.',
    anchor: 'slow-down',
  },
  expired_token: {
    error: 'expired_token',
    description: 'The `device_code` has expired.',
    anchor: 'expired-token',
  },
  unsupported_grant_type: {
    error: 'unsupported_grant_type',
    description: 'The grant type is not supported.',
    anchor: 'unsupported-grant-type',
  },
  incorrect_device_code: {
    error: 'incorrect_device_code',
    description: 'The device_code provided is not valid.',
    anchor: 'incorrect-device-code',
  },
  access_denied: {
    error: 'access_denied',
    description: 'The authorization request was denied.',
    anchor: 'access-denied',
  },
  // RFC 8707 §2: an unknown resource, several, or one outside a refreshed grant (HTTP 400).
  invalid_target: {
    error: 'invalid_target',
    description: 'The requested resource is invalid, unknown, or malformed.',
    anchor: 'invalid-target',
  },
  device_flow_disabled: {
    error: 'device_flow_disabled',
    description: 'Device Flow must be explicitly enabled for this App',
    anchor: 'device-flow-disabled',
  },
} as const satisfies Record<string, Entry>;

export type AuthorizeErrorCode = keyof typeof AUTHORIZE;
export type TokenErrorCode = keyof typeof TOKEN;

/** The three fields as they go on the wire. */
export type OAuthErrorFields = {
  readonly error: string;
  readonly error_description: string;
  readonly error_uri: string;
};

const fields = (entry: Entry, docsUrl: string, description?: string): OAuthErrorFields => ({
  error: entry.error,
  error_description: description ?? entry.description,
  error_uri: `${docsUrl.replace(/\/$/, '')}/oauth/#${entry.anchor}`,
});

export const authorizeErrorFields = (code: AuthorizeErrorCode, docsUrl: string): OAuthErrorFields =>
  fields(AUTHORIZE[code], docsUrl);

export const tokenErrorFields = (
  code: TokenErrorCode,
  docsUrl: string,
  description?: string,
): OAuthErrorFields => fields(TOKEN[code], docsUrl, description);

/** Thrown by the token exchange; the OAuth stack renders it (HTTP 200 unless `status` says otherwise). */
export class OAuthError extends Error {
  override readonly name = 'OAuthError';
  constructor(
    readonly code: TokenErrorCode,
    readonly status = 200,
    readonly description?: string,
    /** Fields answered besides the error's own (`slow_down` carries the new `interval`). */
    readonly extra: Readonly<Record<string, string | number>> = {},
  ) {
    super(code);
  }
}
