import { publicDocumentHandler } from '#http/middleware/oauth-stack';
import { serverMetadata } from '#services/oauth-metadata';
import { config } from '#shared/config';

/** GET /.well-known/oauth-authorization-server (RFC 8414): the server's endpoints and what they accept. */
export const handler = publicDocumentHandler((urls) => ({ ...serverMetadata(urls.auth, config().docsUrl) }));
