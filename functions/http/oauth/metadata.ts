import { publicDocumentHandler } from '#http/middleware/oauth-stack';
import { serverMetadata } from '#services/oauth-metadata';
import { dynamicRegistrationEnabled } from '#services/public-clients';
import { config } from '#shared/config';

/** GET /.well-known/oauth-authorization-server (RFC 8414): the server's endpoints and what they accept. */
export const handler = publicDocumentHandler(async (urls) => ({
  ...serverMetadata(urls.auth, config().docsUrl, { registration: await dynamicRegistrationEnabled() }),
}));
