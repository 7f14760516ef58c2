import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** The event API Gateway sends for a request to its default URL, `https://<id>.execute-api.../prod/...`. */
function gatewayEvent(path: string, query: Record<string, string> | null = null): APIGatewayProxyEvent {
  return {
    httpMethod: 'GET',
    path,
    resource: path,
    headers: { Host: 'abc123.execute-api.eu-west-1.amazonaws.com' },
    multiValueHeaders: {},
    queryStringParameters: query,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    requestContext: {
      domainName: 'abc123.execute-api.eu-west-1.amazonaws.com',
      stage: 'prod',
      path: `/prod${path}`,
    },
  } as unknown as APIGatewayProxyEvent;
}
const context = { awsRequestId: 'test', getRemainingTimeInMillis: () => 10_000 } as Context;

// No public URLs configured: the deployment derives them from the request, stage included.
beforeAll(() => {
  process.env.TABLE_NAME = 'unused-no-database-call-is-made';
});

describe('pages served below a base path (API Gateway stage)', () => {
  it('prefix rendered links and form actions with the stage', async () => {
    const { handler } = (await import('#http/pages/login-form')) as { handler: Handler };
    const result = await handler(gatewayEvent('/login', { return_to: '/settings/tokens' }), context);
    expect(result.statusCode).toBe(200);
    expect(result.body).toContain('action="/prod/login"');
    expect(result.body).toContain('href="/prod/signup?return_to=');
    expect(result.body).not.toMatch(/ (href|action)="\/(?!prod\/)/);
    // The cookies are Secure and host-only over https.
    expect(result.multiValueHeaders?.['Set-Cookie']?.[0]).toMatch(/^__Host-csrf=.*; Secure/);
  });

  it('prefix redirects to site paths with the stage', async () => {
    const { handler } = (await import('#http/settings/tokens')) as { handler: Handler };
    const result = await handler(gatewayEvent('/settings/tokens'), context);
    expect(result.statusCode).toBe(302);
    expect(result.headers?.Location).toBe('/prod/login?return_to=%2Fsettings%2Ftokens');
  });
});
