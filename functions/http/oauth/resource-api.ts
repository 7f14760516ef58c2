import { publicDocumentHandler } from '#http/middleware/oauth-stack';
import { restResourceMetadata } from '#services/oauth-metadata';
import { config } from '#shared/config';

/** GET /.well-known/oauth-protected-resource/api/v3 (RFC 9728): the REST API's resource metadata. */
export const handler = publicDocumentHandler((urls) => ({ ...restResourceMetadata(urls, config().docsUrl) }));
