import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/**
 * The SDK's own MCP client over Streamable HTTP with a bearer token. `protocolVersion` other than
 * the SDK's latest is asked for by rewriting the initialize request on its way out (the client
 * always offers its latest); the server's answer then sets the version the transport sends on
 * every later request (`MCP-Protocol-Version`), as with a client of that version.
 */
export async function mcpClient(
  url: string,
  token: string | undefined,
  options: { readonly protocolVersion?: string } = {},
) {
  const seen: { status: number; protocolHeader: string | null; method?: string }[] = [];
  const fetchWith = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    let body = init?.body;
    let method: string | undefined;
    if (typeof body === 'string') {
      const message = JSON.parse(body) as { method?: string; params?: { protocolVersion?: string } };
      method = message.method;
      if (options.protocolVersion && message.method === 'initialize' && message.params)
        body = JSON.stringify({
          ...message,
          params: { ...message.params, protocolVersion: options.protocolVersion },
        });
    }
    const headers = new Headers(init?.headers);
    const response = await fetch(input, { ...init, body, headers });
    seen.push({ status: response.status, protocolHeader: headers.get('mcp-protocol-version'), method });
    return response;
  };
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: fetchWith,
    ...(token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {}),
  });
  const client = new Client({ name: 'mcp-e2e', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, seen };
}

/** A tool call's structured content, failing the test on an error result. */
export async function callOk(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  // biome-ignore lint/suspicious/noExplicitAny: results are asserted field by field
): Promise<any> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  return result.structuredContent;
}
