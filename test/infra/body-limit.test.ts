import { beforeAll, describe, expect, inject, it } from 'vitest';
import { VIEWER_REQUEST_FUNCTION_SOURCE } from '#cdk/viewer-request-function';
import { type CfnResource, loadDeployment } from '#test/deployment';

type Behavior = {
  PathPattern?: string;
  FunctionAssociations?: { EventType: string; FunctionARN: unknown }[];
};

describe("the web distribution's body limit (the one cdk synth of the infra project)", () => {
  let functions: [string, CfnResource][];
  let defaultBehavior: Behavior;
  let gitBehaviors: Behavior[];

  beforeAll(() => {
    const resources = loadDeployment(inject('cdkOut'), 'OAuthImportService').resources;
    functions = Object.entries(resources).filter(
      ([, resource]) => resource.Type === 'AWS::CloudFront::Function',
    );
    const distributions = Object.values(resources).filter(
      (resource) => resource.Type === 'AWS::CloudFront::Distribution',
    );
    expect(distributions).toHaveLength(1);
    const config = distributions[0]?.Properties.DistributionConfig;
    defaultBehavior = config.DefaultCacheBehavior;
    gitBehaviors = config.CacheBehaviors;
  });

  it('is one CloudFront Function on runtime 2.0 whose code is the generated source, published', () => {
    expect(functions).toHaveLength(1);
    const [, fn] = functions[0] as [string, CfnResource];
    expect(fn.Properties).toMatchObject({
      FunctionCode: VIEWER_REQUEST_FUNCTION_SOURCE,
      FunctionConfig: { Runtime: 'cloudfront-js-2.0' },
      AutoPublish: true,
    });
  });

  it("runs on viewer-request of the API's behaviour, the default one", () => {
    const [id] = functions[0] as [string, CfnResource];
    expect(defaultBehavior.FunctionAssociations).toEqual([
      { EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': [id, 'FunctionARN'] } },
    ]);
  });

  it('runs on none of the Git behaviours: pushes and LFS objects of any size stream to the front end', () => {
    expect(gitBehaviors.length).toBeGreaterThan(0);
    for (const behavior of gitBehaviors)
      expect(behavior.FunctionAssociations, behavior.PathPattern).toBeUndefined();
  });
});
