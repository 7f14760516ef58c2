import { publicDocumentHandler } from '#http/middleware/oauth-stack';
import { mcpResourceMetadata } from '#services/oauth-metadata';
import { config } from '#shared/config';

/** GET /.well-known/oauth-protected-resource/mcp (RFC 9728): the MCP endpoint's resource metadata. */
export const handler = publicDocumentHandler((urls) => ({ ...mcpResourceMetadata(urls, config().docsUrl) }));
