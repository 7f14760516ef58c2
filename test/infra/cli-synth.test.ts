import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { API_ROUTES } from '#cdk/rest-api';

describe('cdk synth (the CLI)', () => {
  it('produces the template offline, with no AWS credentials or configuration', async () => {
    // The infra project's global setup (test/support/infra-setup.ts) ran `cdk synth` with only
    // PATH and an empty HOME; its output is what this checks.
    const out = inject('cdkOut');
    const template = JSON.parse(await readFile(join(out, 'OAuthImportService.template.json'), 'utf8'));
    const resources = Object.values(template.Resources) as Array<{
      Type: string;
      Properties?: { HttpMethod?: string };
    }>;
    // One method per route; the CORS preflights (OPTIONS) are checked in rest-api.test.ts.
    const methods = resources.filter(
      (r) => r.Type === 'AWS::ApiGateway::Method' && r.Properties?.HttpMethod !== 'OPTIONS',
    );
    expect(methods).toHaveLength(API_ROUTES.length);
    expect(resources.filter((r) => r.Type === 'AWS::ECS::Service')).toHaveLength(1);
    expect(resources.filter((r) => r.Type === 'AWS::CloudFront::Distribution')).toHaveLength(1);
    expect(resources.filter((r) => r.Type === 'AWS::DynamoDB::Table')).toHaveLength(1);
  });
});
