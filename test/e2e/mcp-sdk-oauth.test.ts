import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { makeFixtureRepository } from '#local/git-fixtures';
import { type OriginServer, serveGitHttp } from '#local/git-origins';
import { createUser } from '#test/fixtures';
import { callOk } from '#test/mcp-client';
import { json, startTestStack } from '#test/stack';
import { signedIn, type WebClient } from '#test/web-client';

/*
 * An MCP client as it connects for real (issue 38): the SDK's own `Client` and Streamable HTTP
 * transport with its OAuth provider, knowing nothing but the endpoint's URL. It meets the 401,
 * follows `resource_metadata` to the RFC 9728 document and the RFC 8414 metadata, registers itself
 * (RFC 7591, switched on as an admin does), sends the person to the authorize page with PKCE and
 * `resource`, exchanges the code, and then runs an import through the tools. The person signs in
 * and approves on the consent page; the security log then names the application.
 */

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let root: string;
let origin: OriginServer;
let person: WebClient;
const REDIRECT = 'http://127.0.0.1:33419/callback';

/** The SDK's OAuth provider, kept in memory; the "browser" is the signed-in person's client. */
class PersonApproves {
  /** Set: the client names its metadata document (CIMD) instead of registering. */
  clientMetadataUrl?: string;
  information?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  code?: string;
  authorizeUrl?: URL;
  readonly redirectUrl = REDIRECT;
  readonly clientMetadata: OAuthClientMetadata = {
    client_name: 'SDK agent',
    redirect_uris: [REDIRECT],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
  clientInformation = () => this.information;
  saveClientInformation = (information: OAuthClientInformationMixed) => {
    this.information = information;
  };
  tokens = () => this.saved;
  saveTokens = (tokens: OAuthTokens) => {
    this.saved = tokens;
  };
  saveCodeVerifier = (verifier: string) => {
    this.verifier = verifier;
  };
  codeVerifier = () => this.verifier;
  /** The person opens the authorize page, approves the scopes ticked, and the redirect brings the code. */
  redirectToAuthorization = async (url: URL) => {
    this.authorizeUrl = url;
    let response = await person.get(`${url.pathname}${url.search}`);
    if (response.status === 200) {
      const fields: Record<string, string | string[]> = { decision: 'authorize' };
      for (const match of person.lastHtml.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
        if (match[1] !== '_csrf') fields[match[1] ?? ''] = (match[2] ?? '').replace(/&amp;/g, '&');
      fields.granted_scope = [
        ...person.lastHtml.matchAll(/<input type="checkbox" name="granted_scope" value="([^"]+)" checked/g),
      ].map((m) => m[1] ?? '');
      response = await person.post('/login/oauth/authorize', fields);
    }
    const back = new URL(response.headers.get('location') ?? 'missing:');
    this.code = back.searchParams.get('code') ?? undefined;
  };
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mcp-sdk-oauth-'));
  await makeFixtureRepository(join(root, 'project.git'), { commits: 3, branches: 1, annotatedTags: 0 });
  origin = await serveGitHttp(root);
  stack = await startTestStack();
  const user = await createUser(stack.endpointsFile, 'octocat');
  person = await signedIn(stack.webUrl, user);
});
afterAll(async () => {
  await origin?.close();
  await stack?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

describe("the SDK's MCP client with its OAuth provider", () => {
  it('discovers, registers, asks for the MCP resource with PKCE, and runs an import through the tools', async () => {
    const { setDynamicRegistration } = await import('#services/public-clients');
    await setDynamicRegistration(true);
    const mcp = `${stack.webUrl.replace(/\/$/, '')}/mcp`;
    const provider = new PersonApproves();
    const connect = async () => {
      const client = new Client({ name: 'sdk-oauth-e2e', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(mcp), { authProvider: provider }));
      return client;
    };

    // Without a token the client is sent to authorize; it finishes with the code the redirect brought.
    await expect(connect()).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.information?.client_id).toBeTruthy();
    const asked = provider.authorizeUrl?.searchParams;
    expect(asked?.get('resource')).toBe(mcp);
    expect(asked?.get('code_challenge_method')).toBe('S256');
    expect(provider.code).toBeTruthy();
    const transport = new StreamableHTTPClientTransport(new URL(mcp), { authProvider: provider });
    await transport.finishAuth(provider.code ?? '');
    expect(provider.saved?.access_token).toMatch(/^gho_/);

    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('start_import');
    await callOk(client, 'create_repository', { name: 'moved' });
    await callOk(client, 'start_import', {
      owner: 'octocat',
      repo: 'moved',
      vcs_url: `${origin.url}/project.git`,
    });
    let status = '';
    for (
      const deadline = Date.now() + 90_000;
      Date.now() < deadline && !['complete', 'error'].includes(status);
    ) {
      status = (await callOk(client, 'get_import_status', { owner: 'octocat', repo: 'moved' })).status;
      if (status !== 'complete') await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(status).toBe('complete');
    await client.close();

    // The token opens only the MCP endpoint: the REST API refuses it.
    const rest = await fetch(`${stack.baseUrl}/user`, {
      headers: { Authorization: `Bearer ${provider.saved?.access_token}` },
    });
    expect(rest.status).toBe(401);
    // The person's security log names the application and the import it started.
    const log = await person.get('/settings/security-log');
    expect(log.status).toBe(200);
    expect(person.lastHtml).toContain('SDK agent');
    const api = await fetch(`${stack.baseUrl}/user/security-log`, {
      headers: { Authorization: `Basic ${Buffer.from('octocat:octocat-pass-1').toString('base64')}` },
    });
    const actions = ((await json(api)) as { action: string }[]).map((event) => event.action);
    // A client that registered itself enters the person's log when they approve it.
    expect(actions).toContain('oauth_application.register');
    expect(actions).not.toContain('oauth_authorization.create');
    expect(actions.some((action) => action.startsWith('repository_import.'))).toBe(true);
  }, 180_000);
});

describe("the SDK's MCP client with a Client ID Metadata Document", () => {
  it('names its https document as client_id, registers nothing, and is approved as a client not registered here', async () => {
    const { setDynamicRegistration } = await import('#services/public-clients');
    // Registration off: the client must not fall back to it.
    await setDynamicRegistration(false);
    // The document on "the public web": https on 127.0.0.1 with a certificate this run's workers trust.
    const { key, cert } = inject('loopbackTls');
    let documentUrl = '';
    let fetched = 0;
    const documents = createServer({ key, cert }, (request, response) => {
      if (request.url !== '/agent/client.json') return response.writeHead(404).end();
      fetched += 1;
      response.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'max-age=300' });
      response.end(
        JSON.stringify({
          client_id: documentUrl,
          client_name: 'SDK metadata agent',
          client_uri: 'https://127.0.0.1/agent',
          redirect_uris: [REDIRECT],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
        }),
      );
    });
    await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
    documentUrl = `https://127.0.0.1:${(documents.address() as AddressInfo).port}/agent/client.json`;
    try {
      const mcp = `${stack.webUrl.replace(/\/$/, '')}/mcp`;
      const provider = new PersonApproves();
      provider.clientMetadataUrl = documentUrl;
      const connect = async () => {
        const client = new Client({ name: 'sdk-cimd-e2e', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(mcp), { authProvider: provider }));
        return client;
      };
      await expect(connect()).rejects.toBeInstanceOf(UnauthorizedError);
      // The client id is the document's URL; the service fetched the document to show the consent page.
      expect(provider.information?.client_id).toBe(documentUrl);
      expect(provider.authorizeUrl?.searchParams.get('client_id')).toBe(documentUrl);
      expect(provider.authorizeUrl?.searchParams.get('resource')).toBe(mcp);
      expect(fetched).toBeGreaterThanOrEqual(1);
      expect(provider.code).toBeTruthy();
      const transport = new StreamableHTTPClientTransport(new URL(mcp), { authProvider: provider });
      await transport.finishAuth(provider.code ?? '');
      expect(provider.saved?.access_token).toMatch(/^gho_/);

      const client = await connect();
      const created = await callOk(client, 'create_repository', { name: 'by-metadata-agent' });
      expect(created.full_name).toBe('octocat/by-metadata-agent');
      await client.close();

      // The person's applications page and security log name it as a client not registered here.
      await person.get('/settings/connections/applications');
      expect(person.lastHtml).toContain('SDK metadata agent');
      expect(person.lastHtml).toContain('127.0.0.1');
      const api = await fetch(`${stack.baseUrl}/user/security-log`, {
        headers: { Authorization: `Basic ${Buffer.from('octocat:octocat-pass-1').toString('base64')}` },
      });
      const registered = (
        (await json(api)) as { action: string; application?: { client_id: string } }[]
      ).filter((event) => event.action === 'oauth_application.register');
      expect(registered.map((event) => event.application?.client_id)).toContain(documentUrl);
    } finally {
      await new Promise<void>((resolve) => documents.close(() => resolve()));
    }
  }, 120_000);
});
