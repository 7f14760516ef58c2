import { beforeAll, describe, expect, inject, it } from 'vitest';
import { GATEWAY_CONTENT_TYPE } from '#cdk/gateway-responses';
import { loadViewerRequestFunction, type ViewerRequestFunction } from '#local/viewer-request';
import { NOT_FOUND_PAGE_PATH, ROUTES, servedBy } from '#shared/routes';
import { type CfnResource, loadDeployment } from '#test/deployment';

/*
 * The web origin's HTML 404 as deployed (issue 37, decision 0135): the distribution's
 * viewer-request function, run from the template's own code, sends a GET no route serves to the
 * not-found page's path, which API Gateway serves with a method of its own; API paths keep the
 * gateway's JSON 404.
 */

let resources: Readonly<Record<string, CfnResource>>;
let run: ViewerRequestFunction;

const viewerRequest = (method: string, uri: string) => ({
  version: '1.0' as const,
  context: { eventType: 'viewer-request' as const },
  viewer: { ip: '192.0.2.1' },
  request: { method, uri, querystring: {}, headers: {}, cookies: {} },
});

/** Where the deployed function sends a request: its URI afterwards, or the status it answered. */
function sentTo(method: string, uri: string): string | number {
  const result = run(viewerRequest(method, uri));
  return 'statusCode' in result ? result.statusCode : result.uri;
}

beforeAll(() => {
  resources = loadDeployment(inject('cdkOut'), 'OAuthImportService').resources;
  const functions = Object.values(resources).filter(
    (resource) => resource.Type === 'AWS::CloudFront::Function',
  );
  expect(functions).toHaveLength(1);
  run = loadViewerRequestFunction(String(functions[0]?.Properties.FunctionCode));
});

describe("the web origin's not-found page, as synthesized", () => {
  it('leaves every GET a route serves where it is, with parameters and a trailing slash', () => {
    for (const route of ROUTES.filter(
      (candidate) => candidate.method === 'GET' && servedBy(candidate) === 'api',
    )) {
      const sample = route.path.replace(/\{(\w+)\}/g, 'sample-$1');
      expect(sentTo('GET', sample), route.path).toBe(sample);
      if (sample !== '/') expect(sentTo('GET', `${sample}/`), route.path).toBe(`${sample}/`);
    }
  });

  it('sends a GET of any other web path to the not-found page', () => {
    for (const path of [
      '/nobody',
      '/a/b',
      '/a/b/c/d/e',
      '/login/nothing',
      '/settings/tokens/7',
      '/new',
      '/-',
    ])
      expect(sentTo('GET', path), path).toBe(NOT_FOUND_PAGE_PATH);
  });

  it('leaves API paths and other methods to API Gateway (its JSON 404)', () => {
    for (const path of ['/api', '/api/v3/no/such/route', '/api/graphql/x', '/.well-known/nothing'])
      expect(sentTo('GET', path), path).toBe(path);
    expect(sentTo('POST', '/no/such/form')).toBe('/no/such/form');
    expect(sentTo('DELETE', '/')).toBe('/');
  });

  it('still refuses a body over the bound before anything else', () => {
    const result = run({
      ...viewerRequest('GET', '/nobody'),
      request: {
        ...viewerRequest('GET', '/nobody').request,
        headers: { 'content-length': { value: '99999999' } },
      },
    });
    expect('statusCode' in result && result.statusCode).toBe(413);
  });

  it('is a GET method of the API on the not-found path, beside GET / and the import form', () => {
    const parts = Object.values(resources)
      .filter((resource) => resource.Type === 'AWS::ApiGateway::Resource')
      .map((resource) => resource.Properties.PathPart);
    expect(parts).toEqual(expect.arrayContaining(['-', 'not-found', 'new', 'import', 'name']));
    const descriptions = Object.values(resources)
      .filter((resource) => resource.Type === 'AWS::Lambda::Function')
      .map((resource) => resource.Properties.Description);
    expect(descriptions).toEqual(
      expect.arrayContaining([
        `GET ${NOT_FOUND_PAGE_PATH}`,
        'GET /',
        'GET /new/import',
        'POST /new/import',
        'GET /new/import/name',
      ]),
    );
  });

  it("keeps API Gateway's own unknown-route answer JSON", () => {
    const notFound = Object.values(resources).find(
      (resource) =>
        resource.Type === 'AWS::ApiGateway::GatewayResponse' &&
        resource.Properties.ResponseType === 'MISSING_AUTHENTICATION_TOKEN',
    );
    expect(notFound?.Properties).toMatchObject({
      StatusCode: '404',
      ResponseParameters: { 'gatewayresponse.header.Content-Type': `'${GATEWAY_CONTENT_TYPE}'` },
    });
    expect(JSON.parse(notFound?.Properties.ResponseTemplates['application/json'])).toMatchObject({
      message: 'Not Found',
    });
  });
});
