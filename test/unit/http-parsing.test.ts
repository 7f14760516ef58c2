import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { readConfig } from '#shared/config';
import { presentedCredentials } from '#shared/credentials';
import { HttpError } from '#shared/errors';
import { publicUrls } from '#shared/urls';
import { validateBody } from '#shared/validate';

const event = (headers: Record<string, string>, query: Record<string, string> | null = null) =>
  ({ headers, queryStringParameters: query }) as unknown as APIGatewayProxyEvent;
const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('presentedCredentials', () => {
  it('reads Basic, token, Bearer and access_token', () => {
    expect(presentedCredentials(event({ Authorization: basic('octocat', 'p:w') }))).toEqual({
      kind: 'basic',
      username: 'octocat',
      password: 'p:w',
    });
    expect(presentedCredentials(event({ authorization: 'token abc' }))).toEqual({
      kind: 'token',
      token: 'abc',
    });
    expect(presentedCredentials(event({ AUTHORIZATION: 'Bearer abc' }))).toEqual({
      kind: 'token',
      token: 'abc',
    });
    expect(presentedCredentials(event({}, { access_token: 'q' }))).toEqual({ kind: 'token', token: 'q' });
    expect(presentedCredentials(event({}))).toEqual({ kind: 'none' });
  });

  it('calls anything else malformed', () => {
    for (const value of ['Digest x', 'Basic', basic('', 'pw'), 'Basic bm9jb2xvbg==']) {
      expect(presentedCredentials(event({ Authorization: value })).kind).toBe('malformed');
    }
  });
});

describe('validateBody', () => {
  const schema = z.object({ name: z.string(), private: z.optional(z.boolean()) });

  it('returns the typed body and drops unknown keys', () => {
    expect(validateBody(schema, 'Repository', { name: 'x', extra: 1 })).toEqual({ name: 'x' });
  });

  it('maps absent fields to missing_field and wrong types to invalid', () => {
    try {
      validateBody(schema, 'Repository', { private: 'yes' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(HttpError);
      expect((error as HttpError).status).toBe(422);
      expect((error as HttpError).details.errors).toEqual([
        { resource: 'Repository', field: 'name', code: 'missing_field' },
        { resource: 'Repository', field: 'private', code: 'invalid' },
      ]);
    }
  });
});

describe('config and public URLs', () => {
  it('requires a table and checks the vendor', () => {
    expect(() => readConfig({})).toThrow(/TABLE_NAME/);
    expect(() => readConfig({ TABLE_NAME: 't', VENDOR_NAME: 'Bad Vendor' })).toThrow(/VENDOR_NAME/);
    expect(readConfig({ TABLE_NAME: 't' }).vendor).toBe('github');
  });

  it('uses configured URLs, else the API Gateway domain and stage', () => {
    const configured = readConfig({
      TABLE_NAME: 't',
      API_URL: 'https://api.example.com/api/v3/',
      AUTH_URL: 'https://example.com',
    });
    const gatewayEvent = {
      headers: {},
      requestContext: { domainName: 'abc.execute-api.eu-west-1.amazonaws.com', stage: 'prod' },
    } as unknown as APIGatewayProxyEvent;
    expect(publicUrls(configured, gatewayEvent).api).toBe('https://api.example.com/api/v3');
    expect(publicUrls(configured, gatewayEvent).auth).toBe('https://example.com');
    const derived = publicUrls(readConfig({ TABLE_NAME: 't' }), gatewayEvent);
    expect(derived.api).toBe('https://abc.execute-api.eu-west-1.amazonaws.com/prod/api/v3');
    expect(derived.settings).toBe('https://abc.execute-api.eu-west-1.amazonaws.com/prod');
  });
});
