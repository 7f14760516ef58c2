import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '#shared/routes';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('cdk synth (the CLI)', () => {
  it('produces the template offline, with no AWS credentials or configuration', async () => {
    const out = await mkdtemp(join(tmpdir(), 'cli-synth-'));
    const home = await mkdtemp(join(tmpdir(), 'no-aws-home-'));
    // Only what a shell needs: no AWS_* variables, and a HOME without ~/.aws.
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: home,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    };
    try {
      await promisify(execFile)(join(ROOT, 'node_modules/.bin/cdk'), ['synth', '--quiet', '--output', out], {
        cwd: ROOT,
        env,
        timeout: 120_000,
      });
      const template = JSON.parse(await readFile(join(out, 'OAuthImportService.template.json'), 'utf8'));
      const resources = Object.values(template.Resources) as Array<{ Type: string }>;
      expect(resources.filter((r) => r.Type === 'AWS::ApiGateway::Method')).toHaveLength(ROUTES.length);
      expect(resources.filter((r) => r.Type === 'AWS::DynamoDB::Table')).toHaveLength(1);
    } finally {
      await rm(out, { recursive: true, force: true });
      await rm(home, { recursive: true, force: true });
    }
  });
});
