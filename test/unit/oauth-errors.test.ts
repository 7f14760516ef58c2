import { describe, expect, it } from 'vitest';
import { authorizeErrorFields, OAuthError, tokenErrorFields } from '#domain/oauth-errors';
import { negotiateFormat, serializeFields } from '#http/middleware/oauth-stack';

const DOCS = 'https://docs.example/rest';

describe('OAuth error catalogue', () => {
  it("has GitHub's authorize-step errors, with URIs under the docs URL", () => {
    expect(authorizeErrorFields('application_suspended', DOCS)).toEqual({
      error: 'application_suspended',
      error_description: 'Your application has been suspended. Contact support@github.com.',
      error_uri: 'https://docs.example/rest/oauth/#application-suspended',
    });
    expect(authorizeErrorFields('redirect_uri_mismatch', `${DOCS}/`)).toEqual({
      error: 'redirect_uri_mismatch',
      error_description: 'The redirect_uri MUST match the registered callback URL for this application.',
      error_uri: 'https://docs.example/rest/oauth/#redirect-uri-mismatch',
    });
    expect(authorizeErrorFields('access_denied', DOCS).error_description).toBe(
      'The user has denied your application access.',
    );
  });

  it("has GitHub's token-endpoint errors", () => {
    expect(tokenErrorFields('incorrect_client_credentials', DOCS)).toEqual({
      error: 'incorrect_client_credentials',
      error_description: 'The client_id and/or client_secret passed are incorrect.',
      error_uri: 'https://docs.example/rest/oauth/#incorrect-client-credentials',
    });
    expect(tokenErrorFields('redirect_uri_mismatch', DOCS).error_uri).toBe(
      'https://docs.example/rest/oauth/#redirect-uri-mismatch(2)',
    );
    expect(tokenErrorFields('bad_verification_code', DOCS)).toMatchObject({
      error: 'bad_verification_code',
      error_description: 'The code passed is incorrect or expired.',
    });
  });

  it('carries an HTTP status of 200 unless told otherwise', () => {
    expect(new OAuthError('bad_verification_code').status).toBe(200);
    expect(new OAuthError('invalid_request', 400, 'Problems parsing JSON').status).toBe(400);
  });
});

describe('token endpoint serializer', () => {
  const token = { access_token: 'gho_x<&>"\'', scope: 'repo,gist', token_type: 'bearer' };

  it("writes GitHub's form encoding by default", () => {
    expect(serializeFields({ access_token: 'e72e', scope: 'user,gist', token_type: 'bearer' }, 'form')).toBe(
      'access_token=e72e&scope=user%2Cgist&token_type=bearer',
    );
    expect(
      serializeFields(tokenErrorFields('bad_verification_code', 'https://developer.github.com/v3'), 'form'),
    ).toBe(
      'error=bad_verification_code&error_description=The+code+passed+is+incorrect+or+expired.&error_uri=https%3A%2F%2Fdeveloper.github.com%2Fv3%2Foauth%2F%23bad-verification-code',
    );
  });

  it("writes JSON, and XML in GitHub's element order with escaping", () => {
    expect(JSON.parse(serializeFields(token, 'json'))).toEqual(token);
    expect(serializeFields(token, 'xml')).toBe(
      '<OAuth><token_type>bearer</token_type><scope>repo,gist</scope><access_token>gho_x&lt;&amp;&gt;&quot;&apos;</access_token></OAuth>',
    );
  });

  it.each([
    [undefined, 'form'],
    ['', 'form'],
    ['*/*', 'form'],
    ['application/json', 'json'],
    ['application/vnd.github+json', 'json'],
    ['application/atom+xml', 'xml'],
    ['application/xml', 'xml'],
    ['text/xml', 'xml'],
    ['application/json;q=0.5, application/xml', 'xml'],
    ['application/xml;q=0, application/json', 'json'],
    ['text/html', 'form'],
  ] as const)('negotiates Accept %j as %s', (accept, format) => {
    expect(negotiateFormat(accept)).toBe(format);
  });
});
