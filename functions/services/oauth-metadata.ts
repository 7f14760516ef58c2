import { type AuthorizationServerMetadata, authorizationServerMetadata } from '#domain/oauth-metadata';
import {
  mcpResource,
  type ProtectedResourceMetadata,
  protectedResourceMetadata,
  type ResourceUrls,
  restResource,
} from '#domain/resources';
import { SCOPES } from '#domain/scopes';
import { pathTo } from '#shared/routes';

/**
 * The device authorization endpoint (RFC 8628 §3.1), `POST {web}/login/device/code` as on GitHub.
 * Named by path, not by `pathTo`, while its route row lives on another branch of issue 10.
 */
export const DEVICE_AUTHORIZATION_PATH = '/login/device/code';

const docs = (docsUrl: string, page: string) => `${docsUrl.replace(/\/$/, '')}/${page}`;

/**
 * `GET {web}/.well-known/oauth-authorization-server`: the metadata of the server at `webOrigin`
 * (the configured web origin the pages use, `PublicUrls.auth`). Paths come from the route table;
 * the registration endpoint is named only while dynamic registration is on (the caller reads it).
 */
export const serverMetadata = (
  webOrigin: string,
  docsUrl: string,
  options: { readonly registration?: boolean } = {},
): AuthorizationServerMetadata =>
  authorizationServerMetadata(
    webOrigin,
    {
      authorization: pathTo('oauth/authorize'),
      token: pathTo('oauth/access-token'),
      deviceAuthorization: DEVICE_AUTHORIZATION_PATH,
      revocation: pathTo('oauth/revoke'),
      introspection: pathTo('oauth/introspect'),
      ...(options.registration ? { registration: pathTo('oauth/register') } : {}),
    },
    docs(docsUrl, 'oauth/'),
  );

/** RFC 9728 metadata of the MCP endpoint (`{web}/.well-known/oauth-protected-resource/mcp`). */
export const mcpResourceMetadata = (urls: ResourceUrls, docsUrl: string): ProtectedResourceMetadata =>
  protectedResourceMetadata(
    mcpResource(urls),
    urls.auth,
    Object.keys(SCOPES),
    'MCP endpoint',
    docs(docsUrl, 'mcp/'),
  );

/** RFC 9728 metadata of the REST API (`{web}/.well-known/oauth-protected-resource/api/v3`). */
export const restResourceMetadata = (urls: ResourceUrls, docsUrl: string): ProtectedResourceMetadata =>
  protectedResourceMetadata(restResource(urls), urls.auth, Object.keys(SCOPES), 'REST API v3', docsUrl);
