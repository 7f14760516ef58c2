import { config } from '#shared/config';
import { MCP_PATH } from '#shared/routes';

/**
 * Where the MCP endpoint's Protected Resource Metadata (RFC 9728) is: the well-known path with the
 * resource's own path appended (RFC 9728 §3.1), on the web origin that serves `/mcp`.
 */
export const mcpResourceMetadataUrl = (webUrl: string): string =>
  `${webUrl.replace(/\/$/, '')}/.well-known/oauth-protected-resource${MCP_PATH}`;

/** The realm GitHub names in its challenges (`GitHub`), or the configured vendor's name. */
const realm = (): string => (config().vendor === 'github' ? 'GitHub' : config().vendor);

const quoted = (value: string): string => `"${value.replace(/["\\]/g, '\\$&')}"`;

/**
 * `WWW-Authenticate: Bearer …` for the MCP endpoint (RFC 6750 §3, RFC 9728 §5.1): always the realm
 * and `resource_metadata`, so a client finds the authorization server from any 401 or 403; with
 * `error` (`invalid_token`, `insufficient_scope`) and `scope` when the request had a token.
 */
export function bearerChallenge(
  webUrl: string,
  problem?: { readonly error: 'invalid_token' | 'insufficient_scope'; readonly scope?: string },
): string {
  const params: [string, string][] = [['realm', realm()]];
  if (problem) params.push(['error', problem.error]);
  if (problem?.scope) params.push(['scope', problem.scope]);
  params.push(['resource_metadata', mcpResourceMetadataUrl(webUrl)]);
  return `Bearer ${params.map(([name, value]) => `${name}=${quoted(value)}`).join(', ')}`;
}
