import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, mcpToken, personalToken } from '#test/fixtures';
import { callOk, mcpClient } from '#test/mcp-client';
import { json, startTestStack } from '#test/stack';

/*
 * The MCP endpoint (issue 38) as MCP clients meet it: the SDK's own client under both protocol
 * versions, the MCP Inspector's CLI, and the HTTP answers a client needs to authenticate and step
 * up (401 and 403 with their Bearer challenges), over HTTP against the local stack.
 */

const exec = promisify(execFile);
type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let mcpUrl: string;
let repoToken: string;
let narrowToken: string;
/** A personal token: a REST API token, which does not open `/mcp` (RFC 8707). */
let restToken: string;
const INSPECTOR = join(
  import.meta.dirname,
  '../../node_modules/@modelcontextprotocol/inspector-cli/build/cli.js',
);

const initialize = (protocolVersion = '2025-11-25') =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
  });
const post = (body: string, headers: Record<string, string> = {}) =>
  fetch(mcpUrl, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...headers,
    },
    body,
  });

beforeAll(async () => {
  stack = await startTestStack();
  mcpUrl = `${stack.webUrl}/mcp`;
  const user = await createUser(stack.endpointsFile, 'octocat');
  [repoToken, narrowToken, restToken] = await Promise.all([
    mcpToken(stack, user, ['repo']),
    mcpToken(stack, user, ['user']),
    personalToken(stack.baseUrl, user.auth, ['repo']).then(({ token }) => token),
  ]);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe('the MCP endpoint', () => {
  it.each(['2025-11-25', '2025-06-18'])(
    'initializes under protocol version %s and lists every tool with its input schema',
    async (version) => {
      const { client, seen } = await mcpClient(mcpUrl, repoToken, { protocolVersion: version });
      const { tools } = await client.listTools();
      const names = tools.map((tool) => tool.name);
      expect(names).toEqual(
        expect.arrayContaining([
          'list_repositories',
          'create_repository',
          'start_import',
          'start_import_batch',
          'get_import_status',
          'get_import_report',
          'list_import_authors',
          'map_import_author',
          'apply_authors_file',
          'update_import',
          'set_import_lfs',
          'follow_origin',
          'sync_now',
          'cut_over',
          'lookup_revision',
        ]),
      );
      for (const tool of tools) {
        expect(tool.inputSchema.type, tool.name).toBe('object');
        expect(tool.description, tool.name).toBeTruthy();
      }
      const start = tools.find((tool) => tool.name === 'start_import');
      expect(start?.inputSchema.required).toEqual(expect.arrayContaining(['owner', 'repo', 'vcs_url']));
      expect(start?.description).toMatch(/get_import_status/);
      // The version the server agreed to is the one every later request names.
      expect(client.getServerVersion()?.name).toBe('oauth-import-service');
      expect(seen.filter((one) => one.method === 'tools/list').map((one) => one.protocolHeader)).toEqual([
        version,
      ]);
      await client.close();
    },
  );

  it('answers a raw initialize with the version asked for, as JSON (stateless: no session id)', async () => {
    for (const version of ['2025-06-18', '2025-11-25']) {
      const response = await post(initialize(version), { Authorization: `Bearer ${repoToken}` });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/application\/json/);
      expect(response.headers.get('mcp-session-id')).toBeNull();
      const body = await json(response);
      expect(body.result.protocolVersion).toBe(version);
      expect(body.result.capabilities.tools).toBeDefined();
    }
  });

  it('answers a request without a token 401 with the resource metadata URL', async () => {
    const response = await post(initialize());
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${stack.webUrl}/.well-known/oauth-protected-resource/mcp"`,
    );
    expect((await json(response)).error.message).toBe('Requires authentication');
    // The SDK's client without an OAuth provider stops there.
    const refused = await mcpClient(mcpUrl, undefined).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StreamableHTTPError);
    expect((refused as StreamableHTTPError).code).toBe(401);
  });

  it('answers a bad token, a REST API token, a password or a token in the query string 401 invalid_token', async () => {
    const user = Buffer.from('octocat:octocat-pass-1').toString('base64');
    for (const [headers, query] of [
      [{ Authorization: 'Bearer gho_notatokenatall000000000000000000000' }, ''],
      [{ Authorization: `Bearer ${restToken}` }, ''],
      [{ Authorization: `Basic ${user}` }, ''],
      [{}, `?access_token=${repoToken}`],
    ] as const) {
      const response = await fetch(`${mcpUrl}${query}`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: initialize(),
      });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(
        /resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/mcp"/,
      );
    }
    const bad = await post(initialize(), {
      Authorization: 'Bearer ghp_000000000000000000000000000000000000',
    });
    expect(bad.headers.get('www-authenticate')).toMatch(
      /^Bearer resource_metadata="[^"]+", error="invalid_token"$/,
    );
    expect((await json(bad)).error.message).toBe('Bad credentials');
  });

  it('answers GET and DELETE 405 (no stream, no session), POST allowed', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(mcpUrl, {
        method,
        headers: { Authorization: `Bearer ${repoToken}`, Accept: 'text/event-stream' },
      });
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect((await json(response)).error.message).toBe('Method Not Allowed');
    }
  });

  it('refuses a tool the token lacks the scope for with 403 insufficient_scope and the scope', async () => {
    const call = JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'get_import_status', arguments: { owner: 'octocat', repo: 'anything' } },
    });
    const response = await post(call, {
      Authorization: `Bearer ${narrowToken}`,
      'MCP-Protocol-Version': '2025-11-25',
    });
    expect(response.status).toBe(403);
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${stack.webUrl}/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", scope="repo"`,
    );
    const body = await json(response);
    expect(body.id).toBe(7);
    expect(body.error.message).toMatch(/required scopes.*public_repo, repo.*user/);

    // The SDK's client sees the 403; a tool that needs no scope still works for the same token.
    const { client } = await mcpClient(mcpUrl, narrowToken);
    const refused = await client
      .callTool({
        name: 'start_import',
        arguments: { owner: 'octocat', repo: 'x', vcs_url: 'http://127.0.0.1/x.git' },
      })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StreamableHTTPError);
    expect((refused as StreamableHTTPError).code).toBe(403);
    expect((await callOk(client, 'list_repositories', {})).repositories).toEqual([]);
    await client.close();
  });

  it('answers a JSON-RPC parse error and a body over the limit as the transport and API Gateway do', async () => {
    const auth = { Authorization: `Bearer ${repoToken}` };
    const garbled = await post('{not json', auth);
    expect(garbled.status).toBe(400);
    expect((await json(garbled)).error.code).toBe(-32700);
    const huge = await post(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(1_100_000) } }),
      auth,
    );
    expect(huge.status).toBe(413);
  });

  it('answers odd JSON-RPC messages without a 5xx, and tool arguments of the wrong kind as the REST route would', async () => {
    const auth = { Authorization: `Bearer ${repoToken}`, 'MCP-Protocol-Version': '2025-11-25' };
    const call = (id: unknown, name: unknown, args: unknown) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name, arguments: args },
    });
    const odd: unknown[] = [
      call(1, 'no_such_tool', {}),
      call(2, 42, {}),
      call(3, 'get_import_status', 'not an object'),
      call(4, 'map_import_author', { owner: 'octocat', repo: 'x', author_id: 1.5 }),
      call(5, 'get_import_batch', { batch_id: 1e300 }),
      call(6, 'list_import_authors', { owner: 'octocat', repo: 'x', page: -1, per_page: 1e9 }),
      [
        call(7, 'get_import_status', { owner: 'octocat', repo: 'a' }),
        { jsonrpc: '2.0', method: 'notifications/initialized' },
      ],
      { jsonrpc: '2.0', id: 8, method: 'resources/list' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      [],
      'just a string',
    ];
    for (const message of odd) {
      const response = await post(JSON.stringify(message), auth);
      expect(response.status, JSON.stringify(message)).toBeLessThan(500);
    }
    const typed = await json(
      await post(JSON.stringify(call(9, 'get_import_batch', { batch_id: 'seven' })), auth),
    );
    expect(typed.result.isError).toBe(true);
    expect(typed.result.structuredContent).toMatchObject({
      status: 422,
      message: 'Validation Failed',
      errors: [{ resource: 'ImportBatch', field: 'batch_id', code: 'invalid' }],
    });
    const fraction = await json(await post(JSON.stringify(odd[3]), auth));
    expect(fraction.result.structuredContent).toMatchObject({ status: 404, message: 'Not Found' });
  });

  it('lists and calls tools with the MCP Inspector CLI', async () => {
    const inspector = (...args: string[]) =>
      exec(
        process.execPath,
        [
          INSPECTOR,
          '--cli',
          mcpUrl,
          '--transport',
          'http',
          '--header',
          `Authorization: Bearer ${repoToken}`,
          ...args,
        ],
        // Its index.js looks for its package.json relative to the working directory.
        { timeout: 60_000, cwd: dirname(INSPECTOR) },
      );
    const listed = JSON.parse((await inspector('--method', 'tools/list')).stdout);
    expect(listed.tools.map((tool: { name: string }) => tool.name)).toContain('get_import_status');
    const created = JSON.parse(
      (
        await inspector(
          '--method',
          'tools/call',
          '--tool-name',
          'create_repository',
          '--tool-arg',
          'name=from-inspector',
        )
      ).stdout,
    );
    expect(created.structuredContent.full_name).toBe('octocat/from-inspector');
    const status = JSON.parse(
      (
        await inspector(
          '--method',
          'tools/call',
          '--tool-name',
          'get_import_status',
          '--tool-arg',
          'owner=octocat',
          'repo=from-inspector',
        )
      ).stdout,
    );
    // No import yet: the API's own 404, as an error result.
    expect(status.isError).toBe(true);
    expect(status.structuredContent.message).toBe('Not Found');
  }, 120_000);
});
