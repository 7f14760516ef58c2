/**
 * Dynamic Client Registration (RFC 7591), off unless an administrator turns it on: what a
 * registration request may ask for and what this server registers. Every client registered this
 * way is a public client (no secret, `token_endpoint_auth_method` "none", PKCE S256 required) of
 * the authorization code grant with refresh tokens, for a limited lifetime.
 */

/** How long a registered client lives (then it is unknown: a client registers again). */
export const REGISTERED_CLIENT_SECONDS = 30 * 86_400;
/** Registrations per caller address per window. */
export const REGISTRATIONS_PER_WINDOW = 10;
export const REGISTRATION_WINDOW_SECONDS = 3600;
export const MAX_REGISTERED_REDIRECT_URIS = 10;

export const registrationWindow = (nowMs: number): number =>
  Math.floor(nowMs / 1000 / REGISTRATION_WINDOW_SECONDS);

/** What is stored of a registration. */
export interface RegisteredClientMetadata {
  readonly clientName: string;
  readonly clientUri: string | null;
  readonly redirectUris: readonly string[];
  readonly grantTypes: readonly string[];
  readonly scope: string | null;
}

/** RFC 7591 §3.2.2's two errors this server answers with. */
export type RegistrationErrorCode = 'invalid_redirect_uri' | 'invalid_client_metadata';

export type RegistrationCheck =
  | { readonly ok: true; readonly metadata: RegisteredClientMetadata }
  | { readonly ok: false; readonly error: RegistrationErrorCode; readonly description: string };

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);
const GRANT_TYPES = new Set(['authorization_code', 'refresh_token']);

/**
 * A redirect URI a registered client may have: https, or http on a loopback host (RFC 8252 §7.3,
 * native apps); absolute, without a fragment or credentials. Private-use schemes are refused:
 * the consent form's redirect must be one a browser follows to the client.
 */
export function isRegistrableRedirectUri(value: unknown): boolean {
  if (typeof value !== 'string' || value.length > 2048 || /[\s\\#]/.test(value)) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.username || url.password) return false;
  return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname));
}

const invalid = (description: string): RegistrationCheck => ({
  ok: false,
  error: 'invalid_client_metadata',
  description,
});

/** Checks a registration request's body (RFC 7591 §2, §3.1). */
export function checkRegistration(body: unknown): RegistrationCheck {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    return invalid('The registration request must be a JSON object.');
  const doc = body as Record<string, unknown>;
  const uris = doc.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0)
    return {
      ok: false,
      error: 'invalid_redirect_uri',
      description: 'redirect_uris must list at least one URI.',
    };
  if (uris.length > MAX_REGISTERED_REDIRECT_URIS)
    return {
      ok: false,
      error: 'invalid_redirect_uri',
      description: `At most ${MAX_REGISTERED_REDIRECT_URIS} redirect_uris may be registered.`,
    };
  if (!uris.every(isRegistrableRedirectUri))
    return {
      ok: false,
      error: 'invalid_redirect_uri',
      description:
        'Every redirect_uri must be https, or http on a loopback address (127.0.0.1, [::1], localhost).',
    };
  const grantTypes = doc.grant_types ?? ['authorization_code'];
  if (!Array.isArray(grantTypes) || !grantTypes.every((g) => typeof g === 'string' && GRANT_TYPES.has(g)))
    return invalid('grant_types may name only authorization_code and refresh_token.');
  if (!grantTypes.includes('authorization_code'))
    return invalid('grant_types must include authorization_code.');
  const responseTypes = doc.response_types ?? ['code'];
  if (!Array.isArray(responseTypes) || !responseTypes.every((r) => r === 'code'))
    return invalid('response_types may name only code.');
  const method = doc.token_endpoint_auth_method;
  if (method !== undefined && method !== 'none')
    return invalid('Only public clients are registered here: token_endpoint_auth_method must be "none".');
  const name = doc.client_name;
  if (name !== undefined && (typeof name !== 'string' || name.trim() === '' || name.length > 100))
    return invalid('client_name must be a string of 1 to 100 characters.');
  const clientUri = doc.client_uri;
  if (
    clientUri !== undefined &&
    !isRegistrableRedirectUri(clientUri) &&
    !/^https:\/\//.test(String(clientUri))
  )
    return invalid('client_uri must be an https URL.');
  const scope = doc.scope;
  if (scope !== undefined && typeof scope !== 'string') return invalid('scope must be a string.');
  return {
    ok: true,
    metadata: {
      clientName: typeof name === 'string' ? name.trim() : 'Unnamed client',
      clientUri: typeof clientUri === 'string' ? clientUri : null,
      redirectUris: uris as string[],
      grantTypes: [...new Set([...(grantTypes as string[]), 'refresh_token'])],
      scope: typeof scope === 'string' ? scope : null,
    },
  };
}

/** RFC 7591 §3.2.2's error answer: thrown by the registration service, rendered by its route's stack. */
export class RegistrationError extends Error {
  override readonly name = 'RegistrationError';
  constructor(
    readonly code: RegistrationErrorCode,
    readonly description: string,
  ) {
    super(code);
  }
}
