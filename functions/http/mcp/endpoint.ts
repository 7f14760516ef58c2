import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { mcpResource } from '#domain/resources';
import { jsonRpcErrorResult, mcpHandler } from '#http/middleware/mcp-stack';
import { config } from '#shared/config';
import { publicUrls } from '#shared/urls';
import { mcpCaller } from './caller.ts';
import { fetchRequest, proxyResult } from './fetch-bridge.ts';
import { mcpServer } from './server.ts';
import { missingScope } from './step-up.ts';

/** The body as JSON, or undefined when it is not (the transport then answers JSON-RPC's parse error). */
function parsedBody(body: string | null, base64: boolean): unknown {
  if (!body) return undefined;
  try {
    return JSON.parse(base64 ? Buffer.from(body, 'base64').toString('utf8') : body);
  } catch {
    return undefined;
  }
}

/**
 * POST /mcp: MCP's Streamable HTTP, stateless (no session id, one server and transport per
 * request) and answering JSON rather than a stream, which is what a Lambda function behind API
 * Gateway can send. The caller is authenticated first (401 with the Bearer challenge), a tool
 * call the token's scopes do not allow is 403 for step-up, then the SDK's transport and server
 * answer the JSON-RPC messages.
 */
export const handler = mcpHandler(async (event, route) => {
  const urls = publicUrls(config(), event);
  const caller = await mcpCaller(event, route);
  const parsed = parsedBody(event.body, event.isBase64Encoded);
  const refused = missingScope(parsed, caller, mcpResource(urls));
  if (refused) return jsonRpcErrorResult(refused.error, refused.id);
  const server = mcpServer(caller, urls);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: config().maxBodyBytes,
  });
  await server.connect(transport);
  try {
    const response = await transport.handleRequest(
      fetchRequest(event, urls.auth),
      parsed === undefined ? {} : { parsedBody: parsed },
    );
    return await proxyResult(response);
  } finally {
    await server.close();
  }
});
