/**
 * The protected resources this authorization server issues tokens for (RFC 8707, RFC 9728), named
 * in one place: the MCP endpoint at `{web}/mcp` and the REST API at its base URL. A token carries
 * the resource it was granted for; a token without one (every token issued before resource
 * indicators, and every token a client asked for without `resource`) is a REST API token.
 */

/** The service's public addresses a resource is named from (`PublicUrls` has this shape). */
export interface ResourceUrls {
  /** The web origin (`{auth_url}`), e.g. `https://example.com`. */
  readonly auth: string;
  /** The REST API's base URL (`{base_url}`), e.g. `https://example.com/api/v3`. */
  readonly api: string;
}

/** Where the MCP endpoint is served on the web origin. */
export const MCP_PATH = '/mcp';

const trimmed = (url: string): string => url.replace(/\/+$/, '');

/** The MCP endpoint's canonical resource identifier (RFC 8707 §2, MCP's "canonical server URI"). */
export const mcpResource = (urls: Pick<ResourceUrls, 'auth'>): string => `${trimmed(urls.auth)}${MCP_PATH}`;

/** The REST API's canonical resource identifier: its base URL. */
export const restResource = (urls: Pick<ResourceUrls, 'api'>): string => trimmed(urls.api);

/** The resources this server serves, MCP first. */
export const servedResources = (urls: ResourceUrls): readonly string[] => [
  mcpResource(urls),
  restResource(urls),
];

/** The well-known prefix of RFC 9728 §3. */
export const PROTECTED_RESOURCE_WELL_KNOWN = '/.well-known/oauth-protected-resource';

/**
 * Where a resource's metadata document is (RFC 9728 §3.1): the well-known prefix inserted between
 * the resource's origin and its path, `https://host/api/v3` → `https://host/.well-known/oauth-protected-resource/api/v3`.
 */
export function protectedResourceMetadataUrl(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
  return `${url.origin}${PROTECTED_RESOURCE_WELL_KNOWN}${path}`;
}

/** The site path of a resource's metadata document (for the route table). */
export const protectedResourceMetadataPath = (resourcePath: string): string =>
  `${PROTECTED_RESOURCE_WELL_KNOWN}${resourcePath}`;

/** What a challenge says went wrong (RFC 6750 §3.1), and for `insufficient_scope` the scope to ask for. */
export interface ChallengeProblem {
  readonly error: 'invalid_token' | 'insufficient_scope';
  readonly scope?: string;
}

/**
 * `WWW-Authenticate` for a 401 or 403 of a resource (RFC 6750 §3, RFC 9728 §5.1): always the
 * resource's metadata, so a client finds the authorization server from any challenge; with the
 * error and, for a step-up, the scope.
 */
export function bearerChallenge(resource: string, problem?: ChallengeProblem): string {
  const parts = [`resource_metadata="${protectedResourceMetadataUrl(resource)}"`];
  if (problem) parts.push(`error="${problem.error}"`);
  if (problem?.scope) parts.push(`scope="${problem.scope}"`);
  return `Bearer ${parts.join(', ')}`;
}

/** What a token carries of its resource: absent or null for a REST API token. */
export interface ResourceBound {
  readonly resource?: string | null;
}

/** The resource a token was granted for: its own, else the REST API. */
export const grantedResource = (token: ResourceBound, urls: Pick<ResourceUrls, 'api'>): string =>
  token.resource ?? restResource(urls);

/**
 * The one rule for every resource server here: a token opens `resource` exactly when it was granted
 * for it. An MCP token does not open the REST API, and a REST token (no resource) does not open `/mcp`.
 */
export const tokenOpens = (
  token: ResourceBound,
  resource: string,
  urls: Pick<ResourceUrls, 'api'>,
): boolean => grantedResource(token, urls) === trimmed(resource);

export type ResourceCheck =
  | { readonly ok: true /** null: the REST API (stored as no resource). */; readonly resource: string | null }
  | { readonly ok: false; readonly reason: string };

/**
 * The `resource` parameters of a request (RFC 8707 §2): none is the REST API; exactly one that this
 * server serves (compared without a trailing slash); several, a relative one, one with a fragment
 * or one served elsewhere is `invalid_target`. The REST API is stored as null, so tokens asked for
 * it and tokens asked for nothing are the same.
 */
export function checkResources(values: readonly string[], urls: ResourceUrls): ResourceCheck {
  if (values.length === 0) return { ok: true, resource: null };
  if (values.length > 1) return { ok: false, reason: 'Only one resource may be requested per token.' };
  const [value = ''] = values;
  if (value.includes('#')) return { ok: false, reason: 'A resource must not have a fragment.' };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { ok: false, reason: 'A resource must be an absolute URI.' };
  }
  if (url.search) return { ok: false, reason: 'This server serves no resource with a query.' };
  const wanted = trimmed(value);
  if (wanted === mcpResource(urls)) return { ok: true, resource: wanted };
  if (wanted === restResource(urls)) return { ok: true, resource: null };
  return { ok: false, reason: `This server issues no tokens for ${value}.` };
}

/**
 * A refresh's `resource` (RFC 8707 §2.2): none keeps the grant's; otherwise it must be the very
 * resource the grant was for (each grant here is for one resource).
 */
export function checkRefreshResource(
  values: readonly string[],
  granted: string | null,
  urls: ResourceUrls,
): ResourceCheck {
  if (values.length === 0) return { ok: true, resource: granted };
  const checked = checkResources(values, urls);
  if (!checked.ok) return checked;
  if (checked.resource !== granted)
    return { ok: false, reason: 'The resource is not the one this refresh token was granted for.' };
  return checked;
}

/** The scopes and bearer methods a protected resource's metadata names (RFC 9728 §2). */
export interface ProtectedResourceMetadata {
  readonly resource: string;
  readonly authorization_servers: readonly string[];
  readonly scopes_supported: readonly string[];
  readonly bearer_methods_supported: readonly string[];
  readonly resource_name: string;
  readonly resource_documentation: string;
}

export function protectedResourceMetadata(
  resource: string,
  issuer: string,
  scopes: readonly string[],
  name: string,
  documentation: string,
): ProtectedResourceMetadata {
  return {
    resource,
    authorization_servers: [trimmed(issuer)],
    scopes_supported: scopes,
    // RFC 6750 §2.1 only: tokens never in a form body or a query string.
    bearer_methods_supported: ['header'],
    resource_name: name,
    resource_documentation: documentation,
  };
}
