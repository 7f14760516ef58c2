import { describe, expect, it } from 'vitest';
import { VIEWER_REQUEST_FUNCTION_SOURCE } from '#cdk/viewer-request-function';
import { API_GATEWAY_LIMITS } from '#local/http-server';
import { loadViewerRequestFunction, type ViewerRequest } from '#local/viewer-request';
import { MAX_REQUEST_BODY_BYTES } from '#shared/body-limit';
import { GATEWAY_ERROR_BODIES } from '#shared/errors';

/** A viewer-request event as CloudFront Functions (runtime 2.0) passes it. */
function event(headers: Record<string, string>, uri = '/api/v3/user/repos') {
  const request: ViewerRequest = {
    method: 'POST',
    uri,
    querystring: {},
    headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, { value }])),
    cookies: {},
  };
  return {
    version: '1.0',
    context: { eventType: 'viewer-request' },
    viewer: { ip: '192.0.2.1' },
    request,
  } as const;
}

describe("the web distribution's body limit function (its generated source, run without Node's globals)", () => {
  const handler = loadViewerRequestFunction(VIEWER_REQUEST_FUNCTION_SOURCE);

  it('passes on, unchanged, a request without Content-Length, or with one up to the bound', () => {
    const cases: Record<string, string>[] = [
      {},
      { 'transfer-encoding': 'chunked' },
      { 'content-length': '0' },
      { 'content-length': String(MAX_REQUEST_BODY_BYTES) },
    ];
    for (const headers of cases) {
      const sample = event(headers);
      expect(handler(sample), JSON.stringify(headers)).toBe(sample.request);
    }
  });

  it("answers a Content-Length one over the bound with 413 and the gateway's GitHub error body", () => {
    const answer = handler(event({ 'content-length': String(MAX_REQUEST_BODY_BYTES + 1) }));
    expect(answer).toMatchObject({
      statusCode: 413,
      statusDescription: 'Payload Too Large',
      headers: { 'content-type': { value: 'application/json; charset=utf-8' } },
      body: { encoding: 'text' },
    });
    const body = 'body' in answer ? answer.body : undefined;
    expect(JSON.parse(body?.data ?? '')).toEqual(GATEWAY_ERROR_BODIES.payloadTooLarge);
  });

  it("answers a browser's page form over the bound with the pages' HTML 413; API paths and other clients keep JSON", () => {
    const over = String(MAX_REQUEST_BODY_BYTES + 1);
    const browser = 'text/html,application/xhtml+xml,*/*;q=0.8';
    const answer = handler(event({ 'content-length': over, accept: browser }, '/octocat/svn/import/authors'));
    expect(answer).toMatchObject({
      statusCode: 413,
      headers: { 'content-type': { value: 'text/html; charset=utf-8' } },
    });
    const page = 'body' in answer ? (answer.body?.data ?? '') : '';
    expect(page).toMatch(/^<!doctype html>/);
    expect(page).toContain('<h1 id="error-heading">Too much data</h1>');
    expect(page).toContain('the most a page takes');
    for (const [headers, uri] of [
      [{ 'content-length': over, accept: browser }, '/api/v3/user/repos'],
      [{ 'content-length': over, accept: 'application/json' }, '/login/oauth/access_token'],
      [{ 'content-length': over }, '/octocat/svn/import/authors'],
    ] as const) {
      const json = handler(event(headers, uri));
      expect('headers' in json && json.headers?.['content-type']?.value, uri).toBe(
        'application/json; charset=utf-8',
      );
    }
  });

  it("fits CloudFront Functions' 10 KB function size", () => {
    expect(Buffer.byteLength(VIEWER_REQUEST_FUNCTION_SOURCE)).toBeLessThan(10 * 1024);
  });

  it('judges numbers only: a Content-Length that is not one passes on (to API Gateway and Lambda)', () => {
    const sample = event({ 'content-length': 'lots' });
    expect(handler(sample)).toBe(sample.request);
  });
});

describe('the bound', () => {
  it("keeps the worst body under it (6 event bytes a byte) and API Gateway's 10,240 bytes of request line and headers (three times, 6 to 1) within Lambda's payload", () => {
    expect(6 * MAX_REQUEST_BODY_BYTES + 3 * 6 * 10_240 + 4_096).toBeLessThanOrEqual(
      API_GATEWAY_LIMITS.maxInvocationBytes,
    );
  });
});
