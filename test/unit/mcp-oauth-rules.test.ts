import { describe, expect, it } from 'vitest';
import {
  checkClientDocument,
  documentLifetimeSeconds,
  isClientIdUrl,
  MAX_DOCUMENT_SECONDS,
  MIN_DOCUMENT_SECONDS,
} from '#domain/client-metadata';
import { checkRegistration } from '#domain/client-registration';
import { checkListedRedirectUri } from '#domain/redirect-uri';
import {
  bearerChallenge,
  checkRefreshResource,
  checkResources,
  mcpResource,
  protectedResourceMetadataUrl,
  restResource,
  tokenOpens,
} from '#domain/resources';

const urls = { auth: 'https://example.com', api: 'https://example.com/api/v3' };

describe('resources', () => {
  it('names the MCP endpoint and the REST API, and their metadata documents per RFC 9728 §3.1', () => {
    expect(mcpResource(urls)).toBe('https://example.com/mcp');
    expect(restResource({ api: 'https://example.com/api/v3/' })).toBe('https://example.com/api/v3');
    expect(protectedResourceMetadataUrl('https://example.com/mcp')).toBe(
      'https://example.com/.well-known/oauth-protected-resource/mcp',
    );
    expect(protectedResourceMetadataUrl('https://example.com/api/v3')).toBe(
      'https://example.com/.well-known/oauth-protected-resource/api/v3',
    );
    expect(bearerChallenge('https://example.com/mcp', { error: 'invalid_token' })).toBe(
      'Bearer resource_metadata="https://example.com/.well-known/oauth-protected-resource/mcp", error="invalid_token"',
    );
  });

  it('a token opens only the resource it was granted for; no resource is the REST API', () => {
    expect(tokenOpens({}, restResource(urls), urls)).toBe(true);
    expect(tokenOpens({}, mcpResource(urls), urls)).toBe(false);
    expect(tokenOpens({ resource: mcpResource(urls) }, mcpResource(urls), urls)).toBe(true);
    expect(tokenOpens({ resource: mcpResource(urls) }, restResource(urls), urls)).toBe(false);
  });

  it('takes none or one served resource; anything else is invalid_target', () => {
    expect(checkResources([], urls)).toEqual({ ok: true, resource: null });
    expect(checkResources(['https://example.com/api/v3'], urls)).toEqual({ ok: true, resource: null });
    expect(checkResources(['https://example.com/mcp/'], urls)).toEqual({
      ok: true,
      resource: 'https://example.com/mcp',
    });
    for (const bad of [
      ['https://other.example/mcp'],
      ['https://example.com/mcp#x'],
      ['https://example.com/mcp?x=1'],
      ['/mcp'],
      ['https://example.com/mcp', 'https://example.com/api/v3'],
    ])
      expect(checkResources(bad, urls).ok, bad.join(' ')).toBe(false);
  });

  it("a refresh keeps the grant's resource and may not change it", () => {
    expect(checkRefreshResource([], 'https://example.com/mcp', urls)).toEqual({
      ok: true,
      resource: 'https://example.com/mcp',
    });
    expect(checkRefreshResource(['https://example.com/api/v3'], 'https://example.com/mcp', urls).ok).toBe(
      false,
    );
    expect(checkRefreshResource(['https://example.com/mcp'], null, urls).ok).toBe(false);
  });
});

describe('client metadata documents', () => {
  it('takes https URLs with a path and nothing to normalize; http only for allowed hosts', () => {
    expect(isClientIdUrl('https://app.example/client.json')).toBe(true);
    expect(isClientIdUrl('http://127.0.0.1:8080/client.json', ['127.0.0.1'])).toBe(true);
    for (const bad of [
      'http://app.example/client.json',
      'https://app.example',
      'https://app.example/',
      'https://app.example/a/../client.json',
      'https://app.example/client.json?v=1',
      'https://app.example/client.json#x',
      'https://user:pw@app.example/client.json',
      'https://APP.example/client.json',
      `https://app.example/${'a'.repeat(300)}`,
    ])
      expect(isClientIdUrl(bad), bad).toBe(false);
  });

  it('checks the document as the draft says', () => {
    const url = 'https://app.example/client.json';
    const good = { client_id: url, client_name: 'Agent', redirect_uris: ['http://127.0.0.1/cb'] };
    expect(checkClientDocument(url, good)).toMatchObject({ ok: true, metadata: { name: 'Agent' } });
    expect(checkClientDocument(url, { ...good, client_id: `${url}/` }).ok).toBe(false);
    expect(checkClientDocument(url, { ...good, client_secret: 'x' }).ok).toBe(false);
    expect(checkClientDocument(url, { ...good, token_endpoint_auth_method: 'client_secret_basic' }).ok).toBe(
      false,
    );
    expect(checkClientDocument(url, { ...good, redirect_uris: [] }).ok).toBe(false);
    expect(checkClientDocument(url, { ...good, redirect_uris: ['javascript:alert(1)'] }).ok).toBe(false);
    expect(checkClientDocument(url, [good]).ok).toBe(false);
  });

  it('is fresh as long as Cache-Control says, within bounds', () => {
    expect(documentLifetimeSeconds('public, max-age=600')).toBe(600);
    expect(documentLifetimeSeconds('no-store')).toBe(MIN_DOCUMENT_SECONDS);
    expect(documentLifetimeSeconds('max-age=0')).toBe(MIN_DOCUMENT_SECONDS);
    expect(documentLifetimeSeconds('max-age=99999999')).toBe(MAX_DOCUMENT_SECONDS);
    expect(documentLifetimeSeconds(undefined)).toBe(300);
  });

  it('matches listed redirect URIs exactly, loopback on any port', () => {
    const listed = ['https://app.example/cb', 'http://127.0.0.1/callback'];
    expect(checkListedRedirectUri('https://app.example/cb', listed).ok).toBe(true);
    expect(checkListedRedirectUri('http://127.0.0.1:49152/callback', listed).ok).toBe(true);
    expect(checkListedRedirectUri('https://app.example/cb/sub', listed).ok).toBe(false);
    expect(checkListedRedirectUri('http://127.0.0.1:49152/other', listed).ok).toBe(false);
    expect(checkListedRedirectUri(undefined, listed).ok).toBe(false);
  });
});

describe('dynamic client registration', () => {
  it('registers public code-flow clients with https or loopback redirect URIs', () => {
    expect(checkRegistration({ redirect_uris: ['http://localhost:3000/cb'] })).toMatchObject({
      ok: true,
      metadata: { grantTypes: ['authorization_code', 'refresh_token'] },
    });
    expect(checkRegistration({ redirect_uris: ['http://app.example/cb'] })).toMatchObject({
      error: 'invalid_redirect_uri',
    });
    expect(
      checkRegistration({ redirect_uris: ['https://a/cb'], grant_types: ['client_credentials'] }),
    ).toMatchObject({
      error: 'invalid_client_metadata',
    });
    expect(
      checkRegistration({
        redirect_uris: ['https://a/cb'],
        token_endpoint_auth_method: 'client_secret_post',
      }),
    ).toMatchObject({ error: 'invalid_client_metadata' });
    expect(checkRegistration({ redirect_uris: ['https://a/cb'], response_types: ['token'] }).ok).toBe(false);
  });
});
