/**
 * The authorization server metadata document (RFC 8414): what a standard OAuth client needs to
 * find the endpoints and what they accept. Pure: the issuer and endpoint paths come from the
 * caller (the configured web origin and the route table), the scopes from `SCOPES`.
 */
import { SCOPES } from './scopes.ts';

/** The grant types the token endpoint accepts, in RFC 8414's spelling. */
export const GRANT_TYPES = [
  'authorization_code',
  'urn:ietf:params:oauth:grant-type:device_code',
  'refresh_token',
] as const;

/**
 * How a client authenticates at the token endpoint: its secret by HTTP Basic or in the body, or
 * (device flow only, RFC 8628 §3.4: public clients) its client_id alone.
 */
export const TOKEN_ENDPOINT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'] as const;

/** Revocation and introspection always need the client's secret (they reveal or change its tokens). */
export const CLIENT_SECRET_AUTH_METHODS = ['client_secret_basic', 'client_secret_post'] as const;

/** Site paths (beginning with `/`) of the endpoints the document names. */
export interface MetadataPaths {
  readonly authorization: string;
  readonly token: string;
  readonly deviceAuthorization: string;
  readonly revocation: string;
  readonly introspection: string;
  /** Dynamic client registration (RFC 7591), only while an administrator has it on. */
  readonly registration?: string;
}

export interface AuthorizationServerMetadata {
  readonly issuer: string;
  readonly authorization_endpoint: string;
  readonly token_endpoint: string;
  readonly device_authorization_endpoint: string;
  readonly revocation_endpoint: string;
  readonly introspection_endpoint: string;
  readonly scopes_supported: readonly string[];
  readonly response_types_supported: readonly string[];
  readonly grant_types_supported: readonly string[];
  readonly code_challenge_methods_supported: readonly string[];
  readonly token_endpoint_auth_methods_supported: readonly string[];
  readonly revocation_endpoint_auth_methods_supported: readonly string[];
  readonly introspection_endpoint_auth_methods_supported: readonly string[];
  readonly service_documentation: string;
  readonly registration_endpoint?: string;
  /** draft-ietf-oauth-client-id-metadata-document §5: https client ids naming their metadata document. */
  readonly client_id_metadata_document_supported: true;
  /** RFC 9207 is not implemented: no `iss` in authorization responses (GitHub's clients never look). */
  readonly authorization_response_iss_parameter_supported: false;
}

/**
 * The document for a web origin. `issuer` is the origin exactly as given (no trailing slash): RFC
 * 8414 §3.3 has clients compare it character for character with the URL they derived the
 * well-known address from, and every endpoint is that origin followed by a site path.
 */
export function authorizationServerMetadata(
  webOrigin: string,
  paths: MetadataPaths,
  serviceDocumentation: string,
): AuthorizationServerMetadata {
  const issuer = webOrigin.replace(/\/+$/, '');
  return {
    issuer,
    authorization_endpoint: `${issuer}${paths.authorization}`,
    token_endpoint: `${issuer}${paths.token}`,
    device_authorization_endpoint: `${issuer}${paths.deviceAuthorization}`,
    revocation_endpoint: `${issuer}${paths.revocation}`,
    introspection_endpoint: `${issuer}${paths.introspection}`,
    scopes_supported: Object.keys(SCOPES),
    response_types_supported: ['code'],
    grant_types_supported: GRANT_TYPES,
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: TOKEN_ENDPOINT_AUTH_METHODS,
    revocation_endpoint_auth_methods_supported: CLIENT_SECRET_AUTH_METHODS,
    introspection_endpoint_auth_methods_supported: CLIENT_SECRET_AUTH_METHODS,
    service_documentation: serviceDocumentation,
    ...(paths.registration ? { registration_endpoint: `${issuer}${paths.registration}` } : {}),
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: false,
  };
}
