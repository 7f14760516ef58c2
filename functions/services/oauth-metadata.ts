import { type AuthorizationServerMetadata, authorizationServerMetadata } from '#domain/oauth-metadata';
import { pathTo } from '#shared/routes';

/**
 * The device authorization endpoint (RFC 8628 §3.1), `POST {web}/login/device/code` as on GitHub.
 * Named by path, not by `pathTo`, while its route row lives on another branch of issue 10.
 */
export const DEVICE_AUTHORIZATION_PATH = '/login/device/code';

/**
 * `GET {web}/.well-known/oauth-authorization-server`: the metadata of the server at `webOrigin`
 * (the configured web origin the pages use, `PublicUrls.auth`). Paths come from the route table.
 */
export const serverMetadata = (webOrigin: string, docsUrl: string): AuthorizationServerMetadata =>
  authorizationServerMetadata(
    webOrigin,
    {
      authorization: pathTo('oauth/authorize'),
      token: pathTo('oauth/access-token'),
      deviceAuthorization: DEVICE_AUTHORIZATION_PATH,
      revocation: pathTo('oauth/revoke'),
      introspection: pathTo('oauth/introspect'),
    },
    `${docsUrl.replace(/\/$/, '')}/oauth/`,
  );
