import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { smoke } from '#test/smoke';
import { startTestStack } from '#test/stack';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let origin: Server;

/**
 * The Git paths' origin, answering as CloudFront does when it cannot connect to the VPC origin
 * (its 504 error page): the local web origin passes the answer through to the client, so the
 * smoke check sees what it would see in AWS. The API stays the real one.
 */
beforeAll(async () => {
  origin = createServer((_request, response) => {
    response.writeHead(504, {
      'Content-Type': 'text/html',
      Server: 'CloudFront',
      'X-Cache': 'Error from cloudfront',
    });
    response.end('<H1>504 Gateway Timeout ERROR</H1><H2>The request could not be satisfied.</H2>');
  });
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  // The web origin sends the Git paths to this origin instead of a front end.
  const url = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
  stack = await startTestStack({ gitFrontend: async () => ({ url, stop: async () => undefined }) });
});
afterAll(async () => {
  await stack?.stop();
  origin?.close();
});

describe('npm run smoke (bin/smoke.ts) when the Git front end cannot be reached', () => {
  it("explains CloudFront's 504: the load balancer's security group and CloudFront-VPCOrigins-Service-SG", async () => {
    const result = await smoke([stack.webUrl]);

    expect(result.code).toBe(1);
    expect(result.checks.api?.outcome).toBe('PASS');
    expect(result.checks['oauth-metadata']?.outcome).toBe('PASS');
    expect(result.checks.git?.outcome).toBe('FAIL');
    expect(result.checks.git?.message).toMatch(/answered 504 text\/html/);
    expect(result.checks.git?.message).toContain(
      'security group GitFrontendLoadBalancerSecurityGroup… (stack OAuthImportService)',
    );
    expect(result.checks.git?.message).toContain('CloudFront-VPCOrigins-Service-SG');
    expect(result.checks.git?.message).toContain(
      'custom resource WebVpcOriginsSecurityGroup… (stack OAuthImportService)',
    );
  });

  it('names the VPC origin when nothing listens behind it (502)', async () => {
    await new Promise((resolve) => origin.close(resolve));

    const result = await smoke([stack.webUrl, '--repo', 'octocat/hello']);

    expect(result.code).toBe(1);
    expect(result.checks.api?.outcome).toBe('PASS');
    expect(result.checks.git?.message).toMatch(/answered 502/);
    expect(result.checks.git?.message).toContain('CloudFront VPC origin WebDistributionOrigin2VpcOrigin…');
  });
});
