import { describe, expect, it } from 'vitest';
import { authorizationServerMetadata } from '#domain/oauth-metadata';
import { SCOPES } from '#domain/scopes';
import { serverMetadata } from '#services/oauth-metadata';

const PATHS = {
  authorization: '/a',
  token: '/t',
  deviceAuthorization: '/d',
  revocation: '/r',
  introspection: '/i',
};

describe('authorizationServerMetadata', () => {
  it('uses the web origin as issuer without a trailing slash, and puts every endpoint under it', () => {
    const doc = authorizationServerMetadata('https://auth.example/', PATHS, 'https://docs.example/oauth/');
    expect(doc.issuer).toBe('https://auth.example');
    expect([
      doc.authorization_endpoint,
      doc.token_endpoint,
      doc.device_authorization_endpoint,
      doc.revocation_endpoint,
      doc.introspection_endpoint,
    ]).toEqual(['/a', '/t', '/d', '/r', '/i'].map((path) => `https://auth.example${path}`));
  });

  it('keeps a base path in the issuer (API Gateway stage URLs)', () => {
    const doc = authorizationServerMetadata('https://x.example/prod', PATHS, 'https://docs.example/');
    expect(doc.issuer).toBe('https://x.example/prod');
    expect(doc.token_endpoint).toBe('https://x.example/prod/t');
  });

  it('lists the scope catalogue, S256 only and the code response type only', () => {
    const doc = authorizationServerMetadata('https://auth.example', PATHS, 'https://docs.example/');
    expect(doc.scopes_supported).toEqual(Object.keys(SCOPES));
    expect(doc.code_challenge_methods_supported).toEqual(['S256']);
    expect(doc.response_types_supported).toEqual(['code']);
    expect(doc.revocation_endpoint_auth_methods_supported).not.toContain('none');
    expect(doc.introspection_endpoint_auth_methods_supported).not.toContain('none');
  });
});

describe('serverMetadata', () => {
  it('takes the paths from the route table and the documentation from the docs URL', () => {
    const doc = serverMetadata('http://127.0.0.1:3000', 'https://docs.example/rest/');
    expect(doc.authorization_endpoint).toBe('http://127.0.0.1:3000/login/oauth/authorize');
    expect(doc.token_endpoint).toBe('http://127.0.0.1:3000/login/oauth/access_token');
    expect(doc.device_authorization_endpoint).toBe('http://127.0.0.1:3000/login/device/code');
    expect(doc.revocation_endpoint).toBe('http://127.0.0.1:3000/login/oauth/revoke');
    expect(doc.introspection_endpoint).toBe('http://127.0.0.1:3000/login/oauth/introspect');
    expect(doc.service_documentation).toBe('https://docs.example/rest/oauth/');
  });
});
